import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.FileReader;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import com.alibaba.fastjson2.JSON;
import com.alibaba.fastjson2.JSONWriter;
import com.alibaba.otter.canal.connector.core.producer.MQMessageUtils;
import com.alibaba.otter.canal.instance.manager.CanalInstanceWithManager;
import com.alibaba.otter.canal.instance.manager.model.Canal;
import com.alibaba.otter.canal.instance.manager.model.CanalParameter;
import com.alibaba.otter.canal.parse.inbound.mysql.MysqlEventParser;
import com.alibaba.otter.canal.parse.inbound.mysql.tsdb.MemoryTableMeta;
import com.alibaba.otter.canal.parse.inbound.mysql.tsdb.TableMetaTSDB;
import com.alibaba.otter.canal.parse.inbound.mysql.tsdb.TableMetaTSDBFactory;
import com.alibaba.otter.canal.protocol.position.EntryPosition;
import com.alibaba.otter.canal.protocol.ClientIdentity;
import com.alibaba.otter.canal.protocol.FlatMessage;
import com.alibaba.otter.canal.protocol.Message;
import com.alibaba.otter.canal.server.embedded.CanalServerWithEmbedded;
import org.slf4j.LoggerFactory;

/**
 * Runs Canal's embedded server against the MySQL (or MariaDB) server named in the properties file given as the one
 * argument, and prints each flat message it would write to Kafka as one JSON line on stdout, exactly as canal.deployer's
 * Kafka producer writes it with {@code canal.mq.flatMessage=true}: each batch is turned into flat messages by the
 * connector's own {@code MQMessageUtils.messageConverter}, and each is serialized by fastjson2 with
 * {@code WriteNulls}, as {@code CanalKafkaProducer} does.
 *
 * <p>The properties: {@code host}, {@code port}, {@code user}, {@code password}, {@code journal} and {@code position}
 * (where in the binlog to start), and {@code filter} (Canal's table filter regex). The server runs until stdin is
 * closed, so the script that drives the database decides when everything it changed has arrived. Canal's own log
 * goes to stderr.
 */
public final class RecordCanal {
    private static final String DESTINATION = "cdcformats";
    // What canal.deployer's MQ worker asks for (canal.mq.canalBatchSize, canal.mq.canalGetTimeout).
    private static final int BATCH_SIZE = 50;
    private static final long GET_TIMEOUT_MS = 100;

    public static void main(String[] args) throws Exception {
        // stdout holds the messages and nothing else: Canal's log (logback's console, which is System.out unless
        // configured) goes to stderr, from warnings up.
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);
        System.setOut(System.err);
        ((Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME)).setLevel(Level.WARN);

        Properties settings = new Properties();
        try (FileReader reader = new FileReader(args[0], StandardCharsets.UTF_8)) {
            settings.load(reader);
        }
        Canal canal = canal(settings);
        String filter = settings.getProperty("filter");

        CanalServerWithEmbedded server = CanalServerWithEmbedded.instance();
        server.setCanalInstanceGenerator(destination -> {
            CanalInstanceWithManager instance = new CanalInstanceWithManager(canal, filter);
            MysqlEventParser parser = (MysqlEventParser) instance.getEventParser();
            parser.setEnableTsdb(true);
            parser.setTableMetaTSDBFactory(new TableMetaHistory());
            // Canal puts these in system properties for its store's Spring file, which the history in memory has none
            // of; null would be refused.
            parser.setTsdbJdbcUrl("");
            parser.setTsdbJdbcUserName("");
            parser.setTsdbJdbcPassword("");
            return instance;
        });
        server.start();
        server.start(DESTINATION);
        // The client id and filter canal.deployer's MQ worker subscribes with.
        ClientIdentity client = new ClientIdentity(DESTINATION, (short) 1001, "");
        server.subscribe(client);

        ThreadPoolExecutor builders = new ThreadPoolExecutor(2, 2, 0, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>());
        boolean[] open = {true};
        Thread stdin = new Thread(() -> {
            try {
                while (System.in.read() != -1) {
                    // Lines the driver sends are only a sign of life; the end of stdin is what stops the server.
                }
            } catch (IOException ignored) {
                // a broken stdin is its end too
            }
            open[0] = false;
        });
        stdin.setDaemon(true);
        stdin.start();

        while (open[0]) {
            Message message = server.getWithoutAck(client, BATCH_SIZE, GET_TIMEOUT_MS, TimeUnit.MILLISECONDS);
            long batchId = message.getId();
            int size = message.isRaw() ? message.getRawEntries().size() : message.getEntries().size();
            if (batchId == -1 || size == 0) {
                continue;
            }
            List<FlatMessage> flatMessages = MQMessageUtils.messageConverter(
                MQMessageUtils.buildMessageData(message, builders), batchId);
            for (FlatMessage flatMessage : flatMessages) {
                out.write(JSON.toJSONBytes(flatMessage, JSONWriter.Feature.WriteNulls));
                out.write('\n');
            }
            out.flush();
            server.ack(client, batchId);
        }
        server.stop();
        builders.shutdown();
        System.exit(0);
    }

    /** An instance as canal.deployer's defaults configure one, its meta and store in memory. */
    private static Canal canal(Properties settings) {
        CanalParameter parameter = new CanalParameter();
        parameter.setMetaMode(CanalParameter.MetaMode.MEMORY);
        parameter.setHaMode(CanalParameter.HAMode.HEARTBEAT);
        parameter.setIndexMode(CanalParameter.IndexMode.MEMORY);
        parameter.setStorageMode(CanalParameter.StorageMode.MEMORY);
        parameter.setMemoryStorageBufferSize(16 * 1024);
        parameter.setSourcingType(CanalParameter.SourcingType.MYSQL);
        parameter.setDbAddresses(Collections.singletonList(
            new InetSocketAddress(settings.getProperty("host"), Integer.parseInt(settings.getProperty("port")))));
        parameter.setDbUsername(settings.getProperty("user"));
        parameter.setDbPassword(settings.getProperty("password"));
        parameter.setPositions(Collections.singletonList(String.format(
            "{\"journalName\":\"%s\",\"position\":%s,\"timestamp\":%s}",
            settings.getProperty("journal"), settings.getProperty("position"), settings.getProperty("timestamp"))));
        parameter.setSlaveId(1234L);
        parameter.setDefaultConnectionTimeoutInSeconds(30);
        parameter.setConnectionCharset("UTF-8");
        parameter.setConnectionCharsetNumber((byte) 33);
        parameter.setReceiveBufferSize(16 * 1024);
        parameter.setSendBufferSize(16 * 1024);
        parameter.setDetectingEnable(false);

        Canal canal = new Canal();
        canal.setId(1L);
        canal.setName(DESTINATION);
        canal.setCanalParameter(parameter);
        return canal;
    }

    /**
     * Canal's table-meta history (canal.deployer's {@code canal.instance.tsdb.enable=true}, its default), kept in
     * memory: the druid schema repository that Canal's DatabaseTableMeta holds and finds tables in, fed with each DDL
     * of the binlog. The deployer's store (H2) adds only persistence, and its first snapshot of the schema, which is
     * empty here: the recording starts before the workload creates its database. Without a history Canal reads each
     * table's columns from the live database, and fails on rows of a table dropped or altered since.
     */
    private static final class TableMetaHistory implements TableMetaTSDBFactory {
        @Override
        public TableMetaTSDB build(String destination, String springXml) {
            return new MemoryTableMeta() {
                @Override
                public boolean rollback(EntryPosition position) {
                    return true; // the start: no table of the workload exists yet
                }
            };
        }

        @Override
        public void destory(String destination) {
            // nothing kept
        }
    }
}
