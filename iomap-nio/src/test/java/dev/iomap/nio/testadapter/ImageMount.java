package dev.iomap.nio.testadapter;

import dev.iomap.device.BlockDevice;
import dev.iomap.api.DirEntry;
import dev.iomap.api.FallocateMode;
import dev.iomap.api.FileType;
import dev.iomap.api.FsStat;
import dev.iomap.spi.InodeInfo;
import dev.iomap.spi.IoendCompletion;
import dev.iomap.spi.Iomap;
import dev.iomap.spi.IomapFlag;
import dev.iomap.spi.IomapInode;
import dev.iomap.spi.IomapMapping;
import dev.iomap.spi.IomapOps;
import dev.iomap.spi.IomapRequest;
import dev.iomap.spi.IomapType;
import dev.iomap.spi.MountedFilesystem;
import dev.iomap.api.NoSpaceException;
import dev.iomap.spi.WritebackOps;
import dev.iomap.nio.testadapter.ImageMetadata.Node;
import java.io.IOException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One mount of an {@link ImageTestAdapter} image. Every method takes the mount's monitor: simple,
 * and fast enough for tests. Blocks are allocated at a write's {@code begin} ({@code MAPPED + NEW}),
 * as contiguous as the free space allows.
 */
final class ImageMount implements MountedFilesystem, IomapOps, WritebackOps {
    private final BlockDevice device;
    private final ImageTestAdapter.Geometry geometry;
    private final ImageMetadata metadata;
    private final BitSet used;
    private final int blockSize;
    /** Metadata changed since it was last written. */
    private boolean changed;
    private long allocationHint;

    ImageMount(BlockDevice device, ImageTestAdapter.Geometry geometry, ImageMetadata metadata) {
        this.device = device;
        this.geometry = geometry;
        this.metadata = metadata;
        this.blockSize = geometry.blockSize();
        this.used = metadata.usedBlocks(geometry);
        this.allocationHint = geometry.metaBlocks();
    }

    private Node node(long ino) throws NoSuchFileException {
        Node node = metadata.nodes.get(ino);
        if (node == null) {
            throw new NoSuchFileException("inode " + ino);
        }
        return node;
    }

    private Node directory(long ino) throws NoSuchFileException, NotDirectoryException {
        Node node = node(ino);
        if (node.type != FileType.DIRECTORY) {
            throw new NotDirectoryException("inode " + ino);
        }
        return node;
    }

    private void modified(Node node) {
        node.modifiedMillis = System.currentTimeMillis();
        changed = true;
    }

    @Override
    public int blockSize() {
        return blockSize;
    }

    @Override
    public long rootIno() {
        return ImageMetadata.ROOT;
    }

    @Override
    public long maxFileSize() {
        return 1L << 40;
    }

    @Override
    public synchronized InodeInfo getattr(long ino) throws NoSuchFileException {
        Node node = node(ino);
        return new InodeInfo(ino, node.type, node.size, (long) node.blocks.size() * blockSize, node.links,
                node.modifiedMillis);
    }

    @Override
    public synchronized long lookup(long dirIno, String name) throws IOException {
        Long ino = directory(dirIno).entries.get(name);
        if (ino == null) {
            throw new NoSuchFileException(name);
        }
        return ino;
    }

    @Override
    public synchronized long create(long dirIno, String name, FileType type) throws IOException {
        Node dir = directory(dirIno);
        if (dir.entries.containsKey(name)) {
            throw new FileAlreadyExistsException(name);
        }
        long ino = metadata.nextIno++;
        metadata.nodes.put(ino, new Node(ino, type, System.currentTimeMillis()));
        dir.entries.put(name, ino);
        modified(dir);
        return ino;
    }

    @Override
    public synchronized List<DirEntry> readdir(long dirIno) throws IOException {
        List<DirEntry> out = new ArrayList<>();
        for (Map.Entry<String, Long> e : directory(dirIno).entries.entrySet()) {
            out.add(new DirEntry(e.getKey(), e.getValue(), node(e.getValue()).type));
        }
        return out;
    }

    @Override
    public synchronized void unlink(long dirIno, String name) throws IOException {
        Node dir = directory(dirIno);
        Node target = node(lookup(dirIno, name));
        if (target.type == FileType.DIRECTORY) {
            throw new FileSystemException(name, null, "Is a directory");
        }
        dir.entries.remove(name);
        target.links--;
        modified(dir);
    }

    @Override
    public synchronized void rmdir(long dirIno, String name) throws IOException {
        Node dir = directory(dirIno);
        Node target = node(lookup(dirIno, name));
        if (target.type != FileType.DIRECTORY) {
            throw new NotDirectoryException(name);
        }
        if (!target.entries.isEmpty()) {
            throw new DirectoryNotEmptyException(name);
        }
        dir.entries.remove(name);
        metadata.nodes.remove(target.ino);
        modified(dir);
    }

    @Override
    public synchronized long rename(long fromDir, String fromName, long toDir, String toName) throws IOException {
        Node source = node(lookup(fromDir, fromName));
        Node targetDir = directory(toDir);
        Long existing = targetDir.entries.get(toName);
        if (existing != null && existing == source.ino) {
            return -1;
        }
        if (existing != null) {
            Node replaced = node(existing);
            if (replaced.type == FileType.DIRECTORY && source.type != FileType.DIRECTORY) {
                throw new FileSystemException(toName, null, "Is a directory");
            }
            if (replaced.type != FileType.DIRECTORY && source.type == FileType.DIRECTORY) {
                throw new NotDirectoryException(toName);
            }
            if (!replaced.entries.isEmpty()) {
                throw new DirectoryNotEmptyException(toName);
            }
        }
        directory(fromDir).entries.remove(fromName);
        targetDir.entries.put(toName, source.ino);
        modified(targetDir);
        modified(node(fromDir));
        if (existing == null) {
            return -1;
        }
        Node replaced = node(existing);
        if (replaced.type == FileType.DIRECTORY) {
            metadata.nodes.remove(replaced.ino);
            return -1;
        }
        replaced.links--;
        return replaced.links == 0 ? replaced.ino : -1;
    }

    @Override
    public synchronized FsStat statfs() {
        long dataBlocks = geometry.totalBlocks() - geometry.metaBlocks();
        return new FsStat(blockSize, dataBlocks, dataBlocks - used.cardinality(), Long.MAX_VALUE, Long.MAX_VALUE);
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
            throws IOException {
        Node node = node(inode.ino());
        long first = pos / blockSize;
        long blocks = Math.max(1, (pos + length + blockSize - 1) / blockSize - first);
        Long address = node.blocks.get(first);
        if (address != null) {
            long run = 1;
            while (run < blocks && Long.valueOf(address + run).equals(node.blocks.get(first + run))) {
                run++;
            }
            return IomapMapping.of(Iomap.mapped(first * blockSize, run * blockSize, address * blockSize));
        }
        long holes = 1;
        while (holes < blocks && !node.blocks.containsKey(first + holes)) {
            holes++;
        }
        if (!request.contains(IomapRequest.WRITE)) {
            return IomapMapping.of(Iomap.hole(first * blockSize, holes * blockSize));
        }
        long start = allocate(holes);
        long run = 1;
        while (run < holes && start + run < geometry.totalBlocks() && !used.get((int) (start + run))) {
            run++;
        }
        for (long i = 0; i < run; i++) {
            used.set((int) (start + i));
            node.blocks.put(first + i, start + i);
        }
        modified(node);
        return IomapMapping.of(new Iomap(first * blockSize, run * blockSize, IomapType.MAPPED,
                Set.of(IomapFlag.NEW), start * blockSize, null, 0));
    }

    /** @return the first block of a free run, preferring one of {@code wanted} blocks after the hint */
    private long allocate(long wanted) throws NoSpaceException {
        long start = used.nextClearBit((int) allocationHint);
        if (start >= geometry.totalBlocks()) {
            start = used.nextClearBit((int) geometry.metaBlocks());
        }
        if (start >= geometry.totalBlocks()) {
            throw new NoSpaceException(ImageTestAdapter.NAME + ": no free block");
        }
        allocationHint = start + wanted;
        return start;
    }

    @Override
    public synchronized Iomap mapBlocks(IomapInode inode, long pos, long length) throws IOException {
        Node node = node(inode.ino());
        long first = pos / blockSize;
        Long address = node.blocks.get(first);
        if (address == null) {
            throw new IOException(ImageTestAdapter.NAME + ": dirty block " + first + " of inode " + inode.ino()
                    + " has no device block");
        }
        long blocks = Math.max(1, (pos + length + blockSize - 1) / blockSize - first);
        long run = 1;
        while (run < blocks && Long.valueOf(address + run).equals(node.blocks.get(first + run))) {
            run++;
        }
        return Iomap.mapped(first * blockSize, run * blockSize, address * blockSize);
    }

    @Override
    public synchronized void ioendCompleted(IomapInode inode, IoendCompletion completion) throws IOException {
        if (completion.failed()) {
            return;
        }
        Node node = node(inode.ino());
        long size = Math.max(node.size, Math.min(inode.size(), completion.end()));
        if (size != node.size) {
            node.size = size;
            changed = true;
        }
    }

    private void free(Node node, long fromBlock, long toBlock) {
        for (Long block : new ArrayList<>(node.blocks.subMap(fromBlock, toBlock).keySet())) {
            used.clear(node.blocks.remove(block).intValue());
        }
    }

    @Override
    public synchronized void setSize(IomapInode inode, long newSize) throws IOException {
        Node node = node(inode.ino());
        free(node, (newSize + blockSize - 1) / blockSize, Long.MAX_VALUE);
        node.size = newSize;
        modified(node);
    }

    @Override
    public synchronized void fallocate(IomapInode inode, FallocateMode mode, long offset, long length)
            throws IOException {
        Node node = node(inode.ino());
        long first = offset / blockSize;
        long end = (offset + length) / blockSize;
        if (mode == FallocateMode.PUNCH_HOLE) {
            free(node, first, end);
        } else {
            for (long block = first; block < end; block++) {
                Long address = node.blocks.get(block);
                if (address == null) {
                    address = allocate(1);
                    used.set(address.intValue());
                    node.blocks.put(block, address);
                } else if (mode != FallocateMode.ZERO_RANGE) {
                    continue;
                }
                device.discard(address * blockSize, blockSize);
            }
        }
        modified(node);
    }

    @Override
    public synchronized void fsync(IomapInode inode, boolean dataOnly) throws IOException {
        Node node = node(inode.ino());
        if (inode.size() > node.size) {
            node.size = inode.size();
            changed = true;
        }
        if (changed) {
            persist(false);
        }
    }

    @Override
    public synchronized void evict(long ino) throws IOException {
        Node node = node(ino);
        free(node, 0, Long.MAX_VALUE);
        metadata.nodes.remove(ino);
        changed = true;
    }

    @Override
    public synchronized void sync() throws IOException {
        persist(false);
    }

    @Override
    public synchronized void unmount() throws IOException {
        for (Node node : new ArrayList<>(metadata.nodes.values())) {
            if (node.type == FileType.REGULAR && node.links == 0) {
                evict(node.ino);
            }
        }
        persist(true);
    }

    private void persist(boolean clean) throws IOException {
        ImageTestAdapter.write(device, geometry, metadata, clean);
        changed = false;
    }
}
