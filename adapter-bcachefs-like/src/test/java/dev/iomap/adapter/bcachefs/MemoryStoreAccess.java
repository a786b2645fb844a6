package dev.iomap.adapter.bcachefs;

import dev.iomap.adapter.bcachefs.store.BKey;
import dev.iomap.adapter.bcachefs.store.DataSpace;
import dev.iomap.adapter.bcachefs.store.KeyStore;
import dev.iomap.adapter.bcachefs.store.KeyValue;
import dev.iomap.adapter.bcachefs.store.StoreStats;
import dev.iomap.adapter.bcachefs.store.Update;
import dev.iomap.adapter.support.BlockRange;
import dev.iomap.api.NoSpaceException;
import dev.iomap.device.BlockDevice;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/** A store in memory, one per device object, kept across opens: lets the filesystem layer be tested alone. */
final class MemoryStoreAccess implements StoreAccess {
    private final IdentityHashMap<BlockDevice, Memory> stores = new IdentityHashMap<>();

    @Override
    public synchronized KeyStore format(BlockDevice device, Config config) {
        Memory m = new Memory(device.blockSize(), device.capacity() / device.blockSize());
        stores.put(device, m);
        return m;
    }

    @Override
    public synchronized KeyStore open(BlockDevice device, boolean readOnly) {
        return stores.get(device);
    }

    @Override
    public synchronized int probe(BlockDevice device) {
        return stores.containsKey(device) ? device.blockSize() : -1;
    }

    @Override
    public List<String> check(BlockDevice device) {
        return List.of();
    }

    /** The store. */
    static final class Memory implements KeyStore, DataSpace {
        static final int META_BLOCKS = 16;
        private final int blockSize;
        private final long blocks;
        private final TreeMap<BKey, byte[]> keys = new TreeMap<>();
        private final Map<Long, Integer> refs = new HashMap<>();
        private final boolean[] allocated;
        private long reserved;
        private long free;
        private long seq;

        Memory(int blockSize, long blocks) {
            this.blockSize = blockSize;
            this.blocks = blocks;
            this.allocated = new boolean[(int) blocks];
            for (int i = 0; i < META_BLOCKS; i++) {
                allocated[i] = true;
            }
            this.free = blocks - META_BLOCKS;
        }

        @Override
        public int blockSize() {
            return blockSize;
        }

        @Override
        public synchronized Optional<byte[]> get(BKey key) {
            return Optional.ofNullable(keys.get(key)).map(byte[]::clone);
        }

        @Override
        public synchronized List<KeyValue> scan(BKey from, BKey to, int limit) {
            List<KeyValue> out = new ArrayList<>();
            for (Map.Entry<BKey, byte[]> e : keys.subMap(from, to).entrySet()) {
                if (out.size() >= limit) {
                    break;
                }
                out.add(new KeyValue(e.getKey(), e.getValue().clone()));
            }
            return out;
        }

        @Override
        public Update update() {
            List<Runnable> ops = new ArrayList<>();
            Map<Long, Integer> deltas = new HashMap<>();
            return new Update() {
                @Override
                public Update put(BKey key, byte[] value) {
                    if (value.length > 300) {
                        throw new IllegalArgumentException("value too long");
                    }
                    byte[] copy = value.clone();
                    ops.add(() -> keys.put(key, copy));
                    return this;
                }

                @Override
                public Update delete(BKey key) {
                    ops.add(() -> keys.remove(key));
                    return this;
                }

                @Override
                public Update addRefs(BlockRange range, int delta) {
                    for (long b = range.start(); b < range.end(); b++) {
                        deltas.merge(b, delta, Integer::sum);
                    }
                    return this;
                }

                @Override
                public long commit() {
                    synchronized (Memory.this) {
                        ops.forEach(Runnable::run);
                        for (Map.Entry<Long, Integer> d : deltas.entrySet()) {
                            int n = refs.getOrDefault(d.getKey(), 0) + d.getValue();
                            if (n < 0) {
                                throw new IllegalStateException("block " + d.getKey() + " refcount " + n);
                            }
                            if (n == 0) {
                                refs.remove(d.getKey());
                                allocated[(int) (long) d.getKey()] = false;
                                free++;
                            } else {
                                refs.put(d.getKey(), n);
                            }
                        }
                        return ++seq;
                    }
                }
            };
        }

        @Override
        public void flush(long s) {
        }

        @Override
        public void flushAll() {
        }

        @Override
        public void checkpoint() {
        }

        @Override
        public DataSpace space() {
            return this;
        }

        @Override
        public StoreStats stats() {
            return new StoreStats(0, 0, 0, 0, 0);
        }

        @Override
        public void close() {
        }

        @Override
        public synchronized void reserve(long n) throws NoSpaceException {
            if (n > free - reserved) {
                throw new NoSpaceException("memory store full");
            }
            reserved += n;
        }

        @Override
        public synchronized void unreserve(long n) {
            if (n > reserved) {
                throw new IllegalStateException("unreserve " + n + " of " + reserved);
            }
            reserved -= n;
        }

        @Override
        public synchronized BlockRange allocate(long want, long near) throws NoSpaceException {
            for (int b = 0; b < blocks; b++) {
                if (!allocated[b]) {
                    int n = 0;
                    while (n < want && b + n < blocks && !allocated[b + n]) {
                        allocated[b + n] = true;
                        n++;
                    }
                    reserved -= n;
                    free -= n;
                    return new BlockRange(b, n);
                }
            }
            throw new NoSpaceException("no free block");
        }

        @Override
        public synchronized void release(BlockRange range) {
            for (long b = range.start(); b < range.end(); b++) {
                allocated[(int) b] = false;
                free++;
            }
        }

        @Override
        public synchronized int refCount(long block) {
            return refs.getOrDefault(block, 0);
        }

        @Override
        public synchronized long available() {
            return free - reserved;
        }

        @Override
        public synchronized long reserved() {
            return reserved;
        }

        @Override
        public long totalBlocks() {
            return blocks;
        }
    }
}
