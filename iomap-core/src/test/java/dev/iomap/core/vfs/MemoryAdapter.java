package dev.iomap.core.vfs;

import dev.iomap.device.BlockDevice;
import dev.iomap.api.Capability;
import dev.iomap.api.DirEntry;
import dev.iomap.api.FallocateMode;
import dev.iomap.api.FileType;
import dev.iomap.spi.FilesystemAdapter;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.FsStat;
import dev.iomap.api.FsckReport;
import dev.iomap.spi.InodeInfo;
import dev.iomap.spi.Iomap;
import dev.iomap.spi.IomapFlag;
import dev.iomap.spi.IomapInode;
import dev.iomap.spi.IomapMapping;
import dev.iomap.spi.IomapOps;
import dev.iomap.spi.IomapRequest;
import dev.iomap.spi.IomapType;
import dev.iomap.api.MountOptions;
import dev.iomap.spi.MountedFilesystem;
import dev.iomap.api.NoSpaceException;
import dev.iomap.spi.WritebackOps;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.NoSuchFileException;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.EnumSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * A test adapter whose metadata lives in memory (kept per device object, so a remount in the same
 * JVM finds it) and whose data lives on the device: blocks are allocated at a write's {@code begin}
 * ({@code MAPPED + NEW}) and freed by truncate, punch and evict. Every hook call is recorded.
 */
final class MemoryAdapter implements FilesystemAdapter {
    final List<String> calls = new ArrayList<>();
    /** Runs inside {@code unmount}, before it is recorded. */
    volatile Runnable onUnmount = () -> { };
    private final Set<Capability> capabilities;
    private final Map<BlockDevice, State> states = new IdentityHashMap<>();

    MemoryAdapter(Set<Capability> capabilities) {
        this.capabilities = capabilities;
    }

    @Override
    public String name() {
        return "memory";
    }

    @Override
    public String description() {
        return "metadata in memory, data on the device (tests)";
    }

    @Override
    public Set<Capability> capabilities() {
        return capabilities;
    }

    @Override
    public synchronized void format(BlockDevice device, FormatOptions options) {
        states.put(device, new State(options.blockSize(), device.capacity() / options.blockSize()));
    }

    @Override
    public synchronized MountedFilesystem mount(BlockDevice device, MountOptions options) {
        return new Mount(states.get(device));
    }

    @Override
    public FsckReport fsck(BlockDevice device) {
        return new FsckReport(List.of(), "nothing to check");
    }

    private static final class Node {
        final long ino;
        final FileType type;
        final TreeMap<String, Long> entries = new TreeMap<>();
        final TreeMap<Long, Long> blocks = new TreeMap<>();
        long size;
        int links = 1;

        Node(long ino, FileType type) {
            this.ino = ino;
            this.type = type;
        }
    }

    private static final class State {
        final int blockSize;
        final BitSet used = new BitSet();
        final long totalBlocks;
        final Map<Long, Node> nodes = new TreeMap<>();
        long nextIno = 2;

        State(int blockSize, long totalBlocks) {
            this.blockSize = blockSize;
            this.totalBlocks = totalBlocks;
            nodes.put(1L, new Node(1, FileType.DIRECTORY));
        }
    }

    private final class Mount implements MountedFilesystem, IomapOps, WritebackOps {
        private final State state;

        Mount(State state) {
            this.state = state;
        }

        private Node node(long ino) throws NoSuchFileException {
            Node node = state.nodes.get(ino);
            if (node == null) {
                throw new NoSuchFileException("inode " + ino);
            }
            return node;
        }

        @Override
        public int blockSize() {
            return state.blockSize;
        }

        @Override
        public long rootIno() {
            return 1;
        }

        @Override
        public long maxFileSize() {
            return state.totalBlocks * state.blockSize;
        }

        @Override
        public synchronized InodeInfo getattr(long ino) throws NoSuchFileException {
            Node node = node(ino);
            return new InodeInfo(ino, node.type, node.size, (long) node.blocks.size() * state.blockSize,
                    node.links, 0);
        }

        @Override
        public synchronized long lookup(long dirIno, String name) throws NoSuchFileException {
            Long ino = node(dirIno).entries.get(name);
            if (ino == null) {
                throw new NoSuchFileException(name);
            }
            return ino;
        }

        @Override
        public synchronized long create(long dirIno, String name, FileType type) throws FileAlreadyExistsException,
                NoSuchFileException {
            Node dir = node(dirIno);
            if (dir.entries.containsKey(name)) {
                throw new FileAlreadyExistsException(name);
            }
            long ino = state.nextIno++;
            state.nodes.put(ino, new Node(ino, type));
            dir.entries.put(name, ino);
            return ino;
        }

        @Override
        public synchronized List<DirEntry> readdir(long dirIno) throws NoSuchFileException {
            List<DirEntry> out = new ArrayList<>();
            for (Map.Entry<String, Long> e : node(dirIno).entries.entrySet()) {
                out.add(new DirEntry(e.getKey(), e.getValue(), state.nodes.get(e.getValue()).type));
            }
            return out;
        }

        @Override
        public synchronized void unlink(long dirIno, String name) throws NoSuchFileException {
            Long ino = lookup(dirIno, name);
            node(dirIno).entries.remove(name);
            node(ino).links--;
        }

        @Override
        public synchronized void rmdir(long dirIno, String name) throws NoSuchFileException,
                DirectoryNotEmptyException {
            Long ino = lookup(dirIno, name);
            if (!node(ino).entries.isEmpty()) {
                throw new DirectoryNotEmptyException(name);
            }
            node(dirIno).entries.remove(name);
            state.nodes.remove(ino);
        }

        @Override
        public synchronized long rename(long fromDir, String fromName, long toDir, String toName)
                throws NoSuchFileException {
            long ino = lookup(fromDir, fromName);
            Long replaced = node(toDir).entries.put(toName, ino);
            node(fromDir).entries.remove(fromName);
            if (replaced != null && replaced != ino) {
                node(replaced).links--;
                return replaced;
            }
            return -1;
        }

        @Override
        public synchronized FsStat statfs() {
            return new FsStat(state.blockSize, state.totalBlocks, state.totalBlocks - state.used.cardinality(),
                    Long.MAX_VALUE, Long.MAX_VALUE);
        }

        @Override
        public IomapOps iomapOps() {
            return this;
        }

        @Override
        public WritebackOps writebackOps() {
            return this;
        }

        @Override
        public synchronized IomapMapping begin(IomapInode inode, long pos, long length, Set<IomapRequest> request)
                throws NoSpaceException, NoSuchFileException {
            Node node = node(inode.ino());
            long block = pos / state.blockSize;
            Long device = node.blocks.get(block);
            long start = block * state.blockSize;
            if (device != null) {
                return IomapMapping.of(Iomap.mapped(start, state.blockSize, device * state.blockSize));
            }
            if (!request.contains(IomapRequest.WRITE)) {
                return IomapMapping.of(Iomap.hole(start, state.blockSize));
            }
            int free = state.used.nextClearBit(0);
            if (free >= state.totalBlocks) {
                throw new NoSpaceException("memory adapter: no free block");
            }
            state.used.set(free);
            node.blocks.put(block, (long) free);
            return IomapMapping.of(new Iomap(start, state.blockSize, IomapType.MAPPED, EnumSet.of(IomapFlag.NEW),
                    (long) free * state.blockSize, null, 0));
        }

        @Override
        public synchronized Iomap mapBlocks(IomapInode inode, long pos, long length) throws NoSuchFileException {
            long block = pos / state.blockSize;
            long device = node(inode.ino()).blocks.get(block);
            return Iomap.mapped(block * state.blockSize, state.blockSize, device * state.blockSize);
        }

        @Override
        public synchronized void ioendCompleted(IomapInode inode, dev.iomap.spi.IoendCompletion completion)
                throws NoSuchFileException {
            Node node = node(inode.ino());
            node.size = Math.max(node.size, Math.min(inode.size(), completion.end()));
        }

        private void free(Node node, long fromBlock, long toBlock) {
            for (Long block : new ArrayList<>(node.blocks.subMap(fromBlock, toBlock).keySet())) {
                state.used.clear(node.blocks.remove(block).intValue());
            }
        }

        @Override
        public synchronized void setSize(IomapInode inode, long newSize) throws NoSuchFileException {
            calls.add("setSize " + inode.ino() + " " + newSize);
            Node node = node(inode.ino());
            free(node, (newSize + state.blockSize - 1) / state.blockSize, Long.MAX_VALUE);
            node.size = newSize;
        }

        @Override
        public synchronized void fallocate(IomapInode inode, FallocateMode mode, long offset, long length)
                throws NoSuchFileException {
            calls.add("fallocate " + mode + " " + offset + " " + length);
            if (mode != FallocateMode.ALLOCATE) {
                free(node(inode.ino()), offset / state.blockSize, (offset + length) / state.blockSize);
            }
        }

        @Override
        public synchronized void fsync(IomapInode inode, boolean dataOnly) throws NoSuchFileException {
            calls.add((dataOnly ? "fdatasync " : "fsync ") + inode.ino());
            Node node = node(inode.ino());
            node.size = Math.max(node.size, inode.size());
        }

        @Override
        public synchronized void evict(long ino) throws NoSuchFileException {
            calls.add("evict " + ino);
            Node node = node(ino);
            free(node, 0, Long.MAX_VALUE);
            state.nodes.remove(ino);
        }

        @Override
        public void sync() {
        }

        @Override
        public void unmount() {
            onUnmount.run();
            calls.add("unmount");
        }
    }
}
