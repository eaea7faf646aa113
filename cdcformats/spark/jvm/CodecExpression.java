package cdcformats.spark.jvm;

import java.io.Serializable;
import java.util.List;

import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenContext;
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenFallback;
import org.apache.spark.sql.catalyst.expressions.codegen.ExprCode;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;

/**
 * What a function that runs a Java codec over one column is to Spark: an expression of one child, evaluated rather
 * than code-generated (the codec is one call per row either way, and whole-stage code generation calls it from the
 * generated code), null where its input is null or the error mode says so.
 */
abstract class CodecExpression extends Expression implements CodegenFallback, Serializable {
    private static final long serialVersionUID = 1L;

    protected final Expression child;
    private final Seq<Expression> children;

    CodecExpression(Expression child) {
        this.child = child;
        this.children = CollectionConverters.asScala(List.of(child)).toList();
    }

    @Override
    public Seq<Expression> children() {
        return children;
    }

    @Override
    public boolean nullable() {
        return true;
    }

    /**
     * Told as not deterministic, though it is, so that Spark evaluates it once per row: the optimizer copies a
     * deterministic expression into each filter on its result (below the projection that names it), where it runs a
     * second time.
     */
    @Override
    public boolean deterministic() {
        return false;
    }

    @Override
    public ExprCode doGenCode(CodegenContext context, ExprCode code) {
        return CodegenFallback.super.doGenCode(context, code);
    }
}
