package dev.iomap.testbed;

import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.apache.jute.Record;
import org.apache.zookeeper.ZooDefs.OpCode;
import org.apache.zookeeper.server.ByteBufferInputStream;
import org.apache.zookeeper.server.persistence.FileTxnLog;
import org.apache.zookeeper.server.persistence.TxnLog.TxnIterator;
import org.apache.zookeeper.txn.CreateTxn;
import org.apache.zookeeper.txn.DeleteTxn;
import org.apache.zookeeper.txn.MultiTxn;
import org.apache.zookeeper.txn.Txn;
import org.apache.zookeeper.txn.TxnHeader;

/**
 * At most one EX holder per glock, from ZooKeeper's own record: the transaction logs of the ensemble's
 * servers, replayed in zxid order. A glock's holders are the persistent znodes
 * {@code .../locks/<TYPE>-<n>/holders/<node>.<N>.<h>=<MODE>} (iomap-cluster's README); a grant, a
 * demotion and a recovery each change them in one transaction. After every transaction the holders of each
 * glock it touched must be compatible: an EX holder alone (others only in UN), SH holders with SH ones, DF
 * with DF. A transaction counts if a majority of the logs that cover its zxid hold it (a leader killed
 * with a proposal logged but never committed leaves it in its own log only). Thread-confined.
 */
public final class GlockHolders {
    private final Map<String, Map<String, String>> holders = new HashMap<>();
    private final List<String> violations = new ArrayList<>();
    private long transactions;
    private long holderChanges;
    private long exGrants;

    /**
     * Applies one transaction's changes to holder znodes and checks the glocks it touched.
     *
     * @param zxid the transaction's id
     * @param created holder znode paths it created
     * @param deleted holder znode paths it deleted
     */
    public void apply(long zxid, List<String> created, List<String> deleted) {
        transactions++;
        Set<String> touched = new HashSet<>();
        for (String path : deleted) {
            String[] lockAndEntry = split(path);
            if (lockAndEntry != null) {
                Map<String, String> entries = holders.get(lockAndEntry[0]);
                if (entries != null) {
                    entries.remove(lockAndEntry[1]);
                }
                touched.add(lockAndEntry[0]);
                holderChanges++;
            }
        }
        for (String path : created) {
            String[] lockAndEntry = split(path);
            if (lockAndEntry != null) {
                int eq = lockAndEntry[1].lastIndexOf('=');
                String mode = lockAndEntry[1].substring(eq + 1);
                holders.computeIfAbsent(lockAndEntry[0], k -> new TreeMap<>()).put(lockAndEntry[1], mode);
                touched.add(lockAndEntry[0]);
                holderChanges++;
                if (mode.equals("EX")) {
                    exGrants++;
                }
            }
        }
        for (String lock : touched) {
            check(zxid, lock);
        }
    }

    private void check(long zxid, String lock) {
        Map<String, String> entries = holders.getOrDefault(lock, Map.of());
        Set<String> modes = new HashSet<>();
        int ex = 0;
        for (String mode : entries.values()) {
            if (!mode.equals("UN")) {
                modes.add(mode);
            }
            if (mode.equals("EX")) {
                ex++;
            }
        }
        if (ex > 1 || (ex == 1 && modes.size() > 1) || (modes.contains("SH") && modes.contains("DF"))) {
            violations.add(String.format("zxid 0x%x: glock %s has incompatible holders %s", zxid, lock, entries.keySet()));
        }
    }

    /** @return {glock, entry} if {@code path} is a holder znode, else null */
    private static String[] split(String path) {
        int holdersAt = path.lastIndexOf("/holders/");
        if (holdersAt < 0 || path.indexOf("/locks/") < 0) {
            return null;
        }
        String lock = path.substring(path.indexOf("/locks/") + "/locks/".length(), holdersAt);
        return new String[] {lock, path.substring(holdersAt + "/holders/".length())};
    }

    /** @return every violation found, one line each */
    public List<String> violations() {
        return violations;
    }

    /** @return a one-line summary: transactions, holder changes, EX grants, glocks seen */
    public String summary() {
        return transactions + " transactions, " + holderChanges + " holder changes, " + exGrants + " EX grants on "
                + holders.size() + " glocks";
    }

    /**
     * Replays the transaction logs found under the given servers' data directories.
     *
     * @param dataDirs each server's data directory (searched for {@code version-2/log.*})
     * @return the replay, its violations found
     * @throws IOException if a log cannot be read
     */
    public static GlockHolders fromLogs(List<Path> dataDirs) throws IOException {
        List<TreeMap<Long, Change>> logs = new ArrayList<>();
        for (Path dir : dataDirs) {
            for (Path version : versionDirs(dir)) {
                logs.add(read(version.toFile()));
            }
        }
        TreeMap<Long, Integer> votes = new TreeMap<>();
        TreeMap<Long, Change> changes = new TreeMap<>();
        for (TreeMap<Long, Change> log : logs) {
            log.forEach((zxid, change) -> {
                votes.merge(zxid, 1, Integer::sum);
                changes.putIfAbsent(zxid, change);
            });
        }
        GlockHolders replay = new GlockHolders();
        for (Map.Entry<Long, Change> e : changes.entrySet()) {
            long zxid = e.getKey();
            long covering = logs.stream().filter(l -> !l.isEmpty() && l.firstKey() <= zxid && zxid <= l.lastKey()).count();
            if (votes.get(zxid) * 2 > covering) {
                replay.apply(zxid, e.getValue().created(), e.getValue().deleted());
            }
        }
        return replay;
    }

    private static List<Path> versionDirs(Path dir) throws IOException {
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        try (Stream<Path> walk = Files.walk(dir)) {
            return walk.filter(p -> p.getFileName().toString().equals("version-2") && Files.isDirectory(p)).toList();
        }
    }

    /** The znode paths one transaction created and deleted. */
    private record Change(List<String> created, List<String> deleted) {
    }

    /** @return per zxid, the paths created and deleted, of one server's logs */
    private static TreeMap<Long, Change> read(File versionDir) throws IOException {
        TreeMap<Long, Change> log = new TreeMap<>();
        FileTxnLog txnLog = new FileTxnLog(versionDir);
        try (TxnIterator it = txnLog.read(1)) {
            while (it.getHeader() != null) {
                TxnHeader header = it.getHeader();
                List<String> created = new ArrayList<>();
                List<String> deleted = new ArrayList<>();
                collect(header.getType(), it.getTxn(), created, deleted);
                log.put(header.getZxid(), new Change(created, deleted));
                if (!it.next()) {
                    break;
                }
            }
        } finally {
            txnLog.close();
        }
        return log;
    }

    private static void collect(int type, Record txn, List<String> created, List<String> deleted) throws IOException {
        switch (type) {
            case OpCode.create, OpCode.create2, OpCode.createContainer, OpCode.createTTL -> {
                if (txn instanceof CreateTxn create) {
                    created.add(create.getPath());
                } else if (txn instanceof org.apache.zookeeper.txn.CreateContainerTxn container) {
                    created.add(container.getPath());
                } else if (txn instanceof org.apache.zookeeper.txn.CreateTTLTxn ttl) {
                    created.add(ttl.getPath());
                }
            }
            case OpCode.delete, OpCode.deleteContainer -> {
                if (txn instanceof DeleteTxn delete) {
                    deleted.add(delete.getPath());
                }
            }
            case OpCode.multi -> {
                for (Txn sub : ((MultiTxn) txn).getTxns()) {
                    Record record = switch (sub.getType()) {
                        case OpCode.create, OpCode.create2 -> new CreateTxn();
                        case OpCode.delete, OpCode.deleteContainer -> new DeleteTxn();
                        default -> null;
                    };
                    if (record != null) {
                        ByteBufferInputStream.byteBuffer2Record(ByteBuffer.wrap(sub.getData()), record);
                        collect(sub.getType(), record, created, deleted);
                    }
                }
            }
            default -> {
                // session events, set data, errors: no holder changes
            }
        }
    }
}
