package dev.iomap.cli;

import dev.iomap.device.BlockDevice;
import dev.iomap.api.Capability;
import dev.iomap.api.CorruptFilesystemException;
import dev.iomap.api.DirEntry;
import dev.iomap.api.FallocateMode;
import dev.iomap.api.FileType;
import dev.iomap.spi.FilesystemAdapter;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.FsStat;
import dev.iomap.api.FsckReport;
import dev.iomap.spi.InodeInfo;
import dev.iomap.device.IoPurpose;
import dev.iomap.spi.IoendCompletion;
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
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.NoSuchFileException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The CLI tests' adapter, {@value #NAME}: a superblock on the device (magic, block size) so that
 * mkfs, fsck and stat work on image files, data on the device one block per mapping, and metadata
 * in memory for the life of one mount (a new mount finds an empty root). Blocks are allocated at a
 * write's {@code begin} ({@code MAPPED + NEW}), so device traffic is exactly the data written back:
 * no metadata writes, which makes write amplification exact in tests.
 */
final class CliTestAdapter implements FilesystemAdapter {
    static final String NAME = "cli-test";
    private static final byte[] MAGIC = "IOMAPCLI".getBytes(StandardCharsets.US_ASCII);
    private static final int SUPERBLOCK_BYTES = 512;

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public String description() {
        return "superblock on the device, metadata in memory per mount (CLI tests)";
    }

    @Override
    public Set<Capability> capabilities() {
        return EnumSet.of(Capability.DIRECTORIES, Capability.TRUNCATE, Capability.RANDOM_WRITE);
    }

    @Override
    public void format(BlockDevice device, FormatOptions options) throws IOException {
        ByteBuffer superblock = ByteBuffer.allocate(Math.max(SUPERBLOCK_BYTES, device.blockSize()));
        superblock.put(MAGIC).putInt(options.blockSize()).rewind();
        device.write(0, superblock, IoPurpose.METADATA).join();
        device.flush();
    }

    @Override
    public MountedFilesystem mount(BlockDevice device, MountOptions options) throws IOException {
        int blockSize = readSuperblock(device);
        return new Mount(blockSize, device.capacity() / blockSize);
    }

    @Override
    public FsckReport fsck(BlockDevice device) throws IOException {
        try {
            readSuperblock(device);
            return new FsckReport(List.of(), "the superblock");
        } catch (CorruptFilesystemException e) {
            return new FsckReport(List.of(e.getMessage()), "the superblock");
        }
    }

    private static int readSuperblock(BlockDevice device) throws IOException {
        ByteBuffer superblock = ByteBuffer.allocate(Math.max(SUPERBLOCK_BYTES, device.blockSize()));
        device.read(0, superblock);
        superblock.flip();
        byte[] magic = new byte[MAGIC.length];
        superblock.get(magic);
        if (!Arrays.equals(magic, MAGIC)) {
            throw new CorruptFilesystemException("superblock at offset 0: bad magic, not a " + NAME + " image");
        }
        return superblock.getInt();
    }

    private static final class Node {
        final FileType type;
        final TreeMap<String, Long> entries = new TreeMap<>();
        final TreeMap<Long, Long> blocks = new TreeMap<>();
        long size;
        int links = 1;

        Node(FileType type) {
            this.type = type;
        }
    }

    private static final class Mount implements MountedFilesystem, IomapOps, WritebackOps {
        private final int blockSize;
        private final long totalBlocks;
        private final BitSet used = new BitSet();
        private final Map<Long, Node> nodes = new TreeMap<>();
        private long nextIno = 2;

        Mount(int blockSize, long totalBlocks) {
            this.blockSize = blockSize;
            this.totalBlocks = totalBlocks;
            used.set(0);
            nodes.put(1L, new Node(FileType.DIRECTORY));
        }

        private Node node(long ino) throws NoSuchFileException {
            Node node = nodes.get(ino);
            if (node == null) {
                throw new NoSuchFileException("inode " + ino);
            }
            return node;
        }

        @Override
        public int blockSize() {
            return blockSize;
        }

        @Override
        public long rootIno() {
            return 1;
        }

        @Override
        public long maxFileSize() {
            return totalBlocks * blockSize;
        }

        @Override
        public synchronized InodeInfo getattr(long ino) throws NoSuchFileException {
            Node node = node(ino);
            return new InodeInfo(ino, node.type, node.size, (long) node.blocks.size() * blockSize, node.links, 0);
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
        public synchronized long create(long dirIno, String name, FileType type)
                throws FileAlreadyExistsException, NoSuchFileException {
            Node dir = node(dirIno);
            if (dir.entries.containsKey(name)) {
                throw new FileAlreadyExistsException(name);
            }
            long ino = nextIno++;
            nodes.put(ino, new Node(type));
            dir.entries.put(name, ino);
            return ino;
        }

        @Override
        public synchronized List<DirEntry> readdir(long dirIno) throws NoSuchFileException {
            List<DirEntry> out = new ArrayList<>();
            for (Map.Entry<String, Long> e : node(dirIno).entries.entrySet()) {
                out.add(new DirEntry(e.getKey(), e.getValue(), nodes.get(e.getValue()).type));
            }
            return out;
        }

        @Override
        public synchronized void unlink(long dirIno, String name) throws NoSuchFileException {
            long ino = lookup(dirIno, name);
            node(dirIno).entries.remove(name);
            node(ino).links--;
        }

        @Override
        public synchronized void rmdir(long dirIno, String name) throws NoSuchFileException, DirectoryNotEmptyException {
            long ino = lookup(dirIno, name);
            if (!node(ino).entries.isEmpty()) {
                throw new DirectoryNotEmptyException(name);
            }
            node(dirIno).entries.remove(name);
            nodes.remove(ino);
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
            return new FsStat(blockSize, totalBlocks, totalBlocks - used.cardinality(), Long.MAX_VALUE, Long.MAX_VALUE);
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
            long block = pos / blockSize;
            Long address = node.blocks.get(block);
            long start = block * blockSize;
            if (address != null) {
                return IomapMapping.of(Iomap.mapped(start, blockSize, address * blockSize));
            }
            if (!request.contains(IomapRequest.WRITE)) {
                return IomapMapping.of(Iomap.hole(start, blockSize));
            }
            int free = used.nextClearBit(0);
            if (free >= totalBlocks) {
                throw new NoSpaceException(NAME + ": no free block");
            }
            used.set(free);
            node.blocks.put(block, (long) free);
            return IomapMapping.of(new Iomap(start, blockSize, IomapType.MAPPED, EnumSet.of(IomapFlag.NEW),
                    (long) free * blockSize, null, 0));
        }

        @Override
        public synchronized Iomap mapBlocks(IomapInode inode, long pos, long length) throws NoSuchFileException {
            long block = pos / blockSize;
            long address = node(inode.ino()).blocks.get(block);
            return Iomap.mapped(block * blockSize, blockSize, address * blockSize);
        }

        @Override
        public synchronized void ioendCompleted(IomapInode inode, IoendCompletion completion)
                throws NoSuchFileException {
            Node node = node(inode.ino());
            node.size = Math.max(node.size, Math.min(inode.size(), completion.end()));
        }

        private void free(Node node, long fromBlock, long toBlock) {
            for (Long block : new ArrayList<>(node.blocks.subMap(fromBlock, toBlock).keySet())) {
                used.clear(node.blocks.remove(block).intValue());
            }
        }

        @Override
        public synchronized void setSize(IomapInode inode, long newSize) throws NoSuchFileException {
            Node node = node(inode.ino());
            free(node, (newSize + blockSize - 1) / blockSize, Long.MAX_VALUE);
            node.size = newSize;
        }

        @Override
        public synchronized void fallocate(IomapInode inode, FallocateMode mode, long offset, long length)
                throws NoSuchFileException {
            if (mode != FallocateMode.ALLOCATE) {
                free(node(inode.ino()), offset / blockSize, (offset + length) / blockSize);
            }
        }

        @Override
        public synchronized void fsync(IomapInode inode, boolean dataOnly) throws NoSuchFileException {
            Node node = node(inode.ino());
            node.size = Math.max(node.size, inode.size());
        }

        @Override
        public synchronized void evict(long ino) throws NoSuchFileException {
            free(node(ino), 0, Long.MAX_VALUE);
            nodes.remove(ino);
        }

        @Override
        public void sync() {
        }

        @Override
        public void unmount() {
        }
    }
}
