package dev.iomap.adapter.gfs2;

import dev.iomap.adapter.support.ns.PosixNamespace;
import dev.iomap.adapter.support.ns.XattrSet;
import dev.iomap.api.AtomicWriteLimits;
import dev.iomap.api.AttributeChange;
import dev.iomap.api.DirEntry;
import dev.iomap.api.FileFlag;
import dev.iomap.api.FileNames;
import dev.iomap.api.FileStat;
import dev.iomap.api.FileType;
import dev.iomap.api.NewInodeAttributes;
import dev.iomap.api.NoSuchAttributeException;
import dev.iomap.api.XattrMode;
import dev.iomap.spi.InodeOps;
import dev.iomap.spi.XattrOps;
import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.NotLinkException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * The POSIX namespace of a gfs2-like mount: directories (entries stuffed in the dinode while they
 * fit, else in a chain), hard and symbolic links, modes, owners, times and extended attributes. Every
 * change joins the running transaction under the metadata lock, so one operation commits whole or
 * not at all.
 */
abstract class Namespace implements InodeOps, XattrOps {
    final Gfs2Volume volume;
    final Gfs2Transactions tx;

    Namespace(Gfs2Volume volume, Gfs2Transactions tx) {
        this.volume = volume;
        this.tx = tx;
    }

    /** A change of metadata run under {@code meta}. */
    @FunctionalInterface
    interface Change<T> {
        T run() throws IOException;
    }

    /** Runs {@code change} under {@code meta} in the running transaction, after making room for it. */
    <T> T change(Change<T> change) throws IOException {
        checkLive();
        tx.makeRoom();
        return read(change);
    }

    /** Runs {@code change} under {@code meta}. */
    <T> T read(Change<T> change) throws IOException {
        tx.meta.lock();
        try {
            return change.run();
        } finally {
            tx.meta.unlock();
        }
    }

    abstract void checkLive() throws IOException;

    /** Runs {@code op} holding the plan's glocks on a cluster node ({@link NodeLocks#glocked}). */
    abstract <T> T glocked(NodeLocks.Plan plan, Change<T> op) throws IOException;

    /** A cluster node takes the glock of an inode it just created, before anyone may find it. */
    abstract void claim(long ino) throws IOException;

    /** Runs before a new inode is allocated, holding no glock: frees unlinked inodes if that is due ({@link Iopen}). */
    abstract void beforeNewInode() throws IOException;

    /** @return the inode {@code name} in {@code dir} names, or -1 (read under the directory's glock) */
    private long entryIno(long dirIno, String name) throws IOException {
        return read(() -> {
            Entries.Entry e = decoded(dinodeOf(dirIno, FileType.DIRECTORY)).get(name);
            return e == null ? -1L : e.ino();
        });
    }

    abstract void destroy(Dinode d) throws IOException;

    /** @return the dinode, checked to be of {@code type} */
    Dinode dinodeOf(long ino, FileType type) throws IOException {
        Dinode d = volume.dinode(ino);
        if (d.type != type) {
            if (type == FileType.DIRECTORY) {
                throw new NotDirectoryException("inode " + ino);
            }
            if (type == FileType.SYMLINK) {
                throw new NotLinkException("inode " + ino);
            }
            throw new NoSuchFileException("inode " + ino + " is a " + d.type);
        }
        return d;
    }

    /** @return the inode's extended attributes (adapter-support's {@link XattrSet} encoding), read when first asked for */
    XattrSet xattrs(Dinode d) throws IOException {
        volume.loadXattrs(d);
        return d.xattrs.length == 0 ? new XattrSet() : XattrSet.decode(d.xattrs, "extended attributes of inode " + d.ino);
    }

    /** @return the directory's entries, decoded afresh: a copy the caller may change */
    private TreeMap<String, Entries.Entry> entries(Dinode dir) throws IOException {
        return Entries.decodeDirectory(dir.content, dir.ino);
    }

    /**
     * The directory's entries for reading (lookup, readdir), decoded once per content: the dinode keeps
     * the decoded map while its content is the same array (every change of a directory gives it a new
     * one, {@link Gfs2Volume#setContent}). A lookup decoded the whole directory each time, so a directory
     * of 4,000 names cost 4,000 decodes of itself to list with lookups (xfstests generic/676: over 20
     * minutes, 30 s on xfs-like). Called under {@code meta}.
     */
    private SortedMap<String, Entries.Entry> decoded(Dinode dir) throws IOException {
        if (dir.decodedFrom != dir.content) {
            dir.decodedEntries = Collections.unmodifiableSortedMap(Entries.decodeDirectory(dir.content, dir.ino));
            dir.decodedFrom = dir.content;
        }
        return dir.decodedEntries;
    }

    @Override
    public FileStat getattr(long ino) throws IOException {
        return glocked(NodeLocks.Plan.shared(ino), () -> read(() -> {
            Dinode d = volume.dinode(ino);
            return new FileStat(ino, d.type, d.size, (d.blocks + 1) * volume.blockSize, d.nlink, d.mode, d.uid, d.gid,
                    d.atime, d.mtime, d.ctime, d.btime, AtomicWriteLimits.NONE, d.rdev);
        }));
    }

    @Override
    public long lookup(long dirIno, String name) throws IOException {
        long ino = glocked(NodeLocks.Plan.shared(dirIno), () -> entryIno(dirIno, name));
        if (ino < 0) {
            throw new NoSuchFileException(name);
        }
        return ino;
    }

    @Override
    public long create(long dirIno, String name, FileType type) throws IOException {
        return create(dirIno, name, type, NewInodeAttributes.defaults(type));
    }

    @Override
    public long create(long dirIno, String name, FileType type, NewInodeAttributes attributes) throws IOException {
        beforeNewInode();
        return glocked(NodeLocks.Plan.allocatingOnly(newInodeBlocks(name, 0), dirIno), () -> {
            long ino = posix(store -> PosixNamespace.create(store, dirIno, name, type, attributes));
            claim(ino);
            return ino;
        });
    }

    /**
     * @return the most blocks a new inode named {@code name} allocates: its dinode, its content (a link
     *     target of {@code contentBytes}) and the directory's growth ({@link #newEntryBlocks})
     */
    private long newInodeBlocks(String name, int contentBytes) {
        return 1L + Chain.blocksFor(contentBytes, volume.blockSize) + newEntryBlocks(name);
    }

    /**
     * @return the most blocks a directory's content chain grows by when {@code name} is added: a stuffed
     *     directory that overflows becomes a chain of its whole content, else the entry fills the last
     *     block and goes on into at most that many more
     */
    private long newEntryBlocks(String name) {
        int entry = 11 + FileNames.encode(name).length;
        return Chain.blocksFor(volume.layout.stuffedCapacity() + entry, volume.blockSize) + 1L;
    }

    @Override
    public long symlink(long dirIno, String name, byte[] target, NewInodeAttributes attributes) throws IOException {
        beforeNewInode();
        return glocked(NodeLocks.Plan.allocatingOnly(newInodeBlocks(name, target.length), dirIno), () -> {
            long ino = posix(store -> PosixNamespace.symlink(store, dirIno, name, target, attributes));
            claim(ino);
            return ino;
        });
    }

    @Override
    public long mknod(long dirIno, String name, FileType type, long rdev, NewInodeAttributes attributes)
            throws IOException {
        beforeNewInode();
        return glocked(NodeLocks.Plan.allocatingOnly(newInodeBlocks(name, 0), dirIno), () -> {
            long ino = posix(store -> PosixNamespace.mknod(store, dirIno, name, type, rdev, attributes));
            claim(ino);
            return ino;
        });
    }

    @Override
    public byte[] readlink(long ino) throws IOException {
        return glocked(NodeLocks.Plan.shared(ino),
                () -> read(() -> Entries.copy(dinodeOf(ino, FileType.SYMLINK).content)));
    }

    @Override
    public void link(long ino, long dirIno, String name) throws IOException {
        glocked(NodeLocks.Plan.allocatingOnly(newEntryBlocks(name), ino, dirIno), () -> posix(store -> {
            PosixNamespace.link(store, ino, dirIno, name);
            return null;
        }));
    }

    @Override
    public FileStat setattr(long ino, AttributeChange change) throws IOException {
        glocked(NodeLocks.Plan.exclusive(ino), () -> change(() -> {
            Dinode d = volume.dinode(ino);
            if (change.isEmpty()) {
                return null;
            }
            change.mode().ifPresent(m -> d.mode = m);
            change.uid().ifPresent(u -> d.uid = u);
            change.gid().ifPresent(g -> d.gid = g);
            change.atime().ifPresent(t -> d.atime = t);
            change.mtime().ifPresent(t -> d.mtime = t);
            if (change.setsCtime()) {
                d.ctime = Instant.now();
            }
            volume.dirtyDinode(d);
            return null;
        }));
        return getattr(ino);
    }

    @Override
    public byte[] getxattr(long ino, String name) throws IOException {
        return glocked(NodeLocks.Plan.shared(ino), () -> read(() -> {
            byte[] value = xattrs(volume.dinode(ino)).get(name);
            if (value == null) {
                throw new NoSuchAttributeException("inode " + ino, name);
            }
            return value;
        }));
    }

    @Override
    public List<String> listxattr(long ino) throws IOException {
        return glocked(NodeLocks.Plan.shared(ino), () -> read(() -> xattrs(volume.dinode(ino)).names()));
    }

    @Override
    public void setxattr(long ino, String name, byte[] value, XattrMode mode) throws IOException {
        glocked(NodeLocks.Plan.allocating(ino), () -> change(() -> {
            Dinode d = volume.dinode(ino);
            XattrSet attrs = xattrs(d);
            boolean exists = attrs.get(name) != null;
            if (mode == XattrMode.CREATE && exists) {
                throw new FileAlreadyExistsException(name);
            }
            if (mode == XattrMode.REPLACE && !exists) {
                throw new NoSuchAttributeException("inode " + ino, name);
            }
            attrs.put(name, value);
            volume.setXattrs(d, attrs.encode());
            d.ctime = Instant.now();
            return null;
        }));
    }

    @Override
    public void removexattr(long ino, String name) throws IOException {
        glocked(NodeLocks.Plan.allocating(ino), () -> change(() -> {
            Dinode d = volume.dinode(ino);
            XattrSet attrs = xattrs(d);
            if (!attrs.remove(name)) {
                throw new NoSuchAttributeException("inode " + ino, name);
            }
            volume.setXattrs(d, attrs.isEmpty() ? new byte[0] : attrs.encode());
            d.ctime = Instant.now();
            return null;
        }));
    }

    @Override
    public List<DirEntry> readdir(long dirIno) throws IOException {
        return glocked(NodeLocks.Plan.shared(dirIno), () -> read(() -> {
            List<DirEntry> list = new ArrayList<>();
            for (Map.Entry<String, Entries.Entry> e : decoded(dinodeOf(dirIno, FileType.DIRECTORY)).entrySet()) {
                list.add(new DirEntry(e.getKey(), e.getValue().ino(), e.getValue().type()));
            }
            return list;
        }));
    }

    @Override
    public void unlink(long dirIno, String name) throws IOException {
        glocked(NodeLocks.Plan.exclusive(dirIno), () -> glocked(NodeLocks.Plan.allocating(entryIno(dirIno, name)),
                () -> posix(store -> {
            PosixNamespace.unlink(store, dirIno, name);
            return null;
        })));
    }

    @Override
    public void rmdir(long dirIno, String name) throws IOException {
        glocked(NodeLocks.Plan.exclusive(dirIno), () -> glocked(NodeLocks.Plan.allocating(entryIno(dirIno, name)),
                () -> posix(store -> {
            PosixNamespace.rmdir(store, dirIno, name);
            return null;
        })));
    }

    @Override
    public long rename(long fromDir, String fromName, long toDir, String toName) throws IOException {
        return glocked(NodeLocks.Plan.exclusive(fromDir, toDir).withRename(), () -> glocked(
                NodeLocks.Plan.allocating(entryIno(fromDir, fromName), entryIno(toDir, toName)),
                () -> posix(store -> PosixNamespace.rename(store, fromDir, fromName, toDir, toName))));
    }

    @Override
    public long renameWhiteout(long fromDir, String fromName, long toDir, String toName, NewInodeAttributes whiteout)
            throws IOException {
        beforeNewInode();
        return glocked(NodeLocks.Plan.exclusive(fromDir, toDir).withRename(), () -> glocked(
                NodeLocks.Plan.allocating(entryIno(fromDir, fromName), entryIno(toDir, toName)), () -> {
            long orphan = posix(store -> PosixNamespace.renameWhiteout(store, fromDir, fromName, toDir, toName,
                    whiteout));
            long left = entryIno(fromDir, fromName);
            if (left >= 0) {
                claim(left);
            }
            return orphan;
        }));
    }

    @Override
    public void exchange(long dir1, String name1, long dir2, String name2) throws IOException {
        glocked(NodeLocks.Plan.exclusive(dir1, dir2).withRename(), () -> glocked(
                NodeLocks.Plan.allocating(entryIno(dir1, name1), entryIno(dir2, name2)),
                () -> posix(store -> {
            PosixNamespace.exchange(store, dir1, name1, dir2, name2);
            return null;
        })));
    }

    /** One namespace change in the running transaction, as {@link PosixNamespace} uses it. */
    @FunctionalInterface
    private interface StoreChange<T> {
        T run(DinodeStore store) throws IOException;
    }

    /** Runs {@code change} as {@link #change} does, then stores the directories it changed. */
    private <T> T posix(StoreChange<T> change) throws IOException {
        return change(() -> {
            DinodeStore store = new DinodeStore();
            T result = change.run(store);
            store.finish();
            return result;
        });
    }

    /**
     * The dinodes and directories of one change: a directory's entries are decoded once and stored
     * back whole when the change finishes, then the directories it removed are destroyed.
     */
    private final class DinodeStore implements PosixNamespace.Store<Dinode> {
        private final Map<Long, TreeMap<String, Entries.Entry>> directories = new LinkedHashMap<>();
        private final Set<Long> changedDirectories = new LinkedHashSet<>();
        private final List<Dinode> removed = new ArrayList<>();

        private TreeMap<String, Entries.Entry> entriesOf(Dinode dir) throws IOException {
            TreeMap<String, Entries.Entry> entries = directories.get(dir.ino);
            if (entries == null) {
                entries = entries(dir);
                directories.put(dir.ino, entries);
            }
            return entries;
        }

        @Override
        public Dinode inode(long ino) throws IOException {
            return volume.dinode(ino);
        }

        @Override
        public Optional<DirEntry> find(Dinode dir, String name) throws IOException {
            Entries.Entry e = entriesOf(dir).get(name);
            return e == null ? Optional.empty() : Optional.of(new DirEntry(name, e.ino(), e.type()));
        }

        @Override
        public boolean isEmpty(Dinode dir) throws IOException {
            return entriesOf(dir).isEmpty();
        }

        @Override
        public Dinode allocate(Dinode dir, String name, PosixNamespace.NewInode inode) throws IOException {
            long ino = volume.allocate(dir.ino, dir.ino, 1, ResourceGroup.DINODE)[0];
            Dinode d = new Dinode(ino, volume.layout);
            d.type = inode.type();
            d.mode = inode.mode();
            d.uid = inode.uid();
            d.gid = inode.gid();
            d.nlink = inode.linkCount();
            d.parent = inode.dirIno();
            // JDATA as before (a directory's is inherited by what is created in it); the chattr flags Linux
            // passes on (FileFlag.inheritedFrom: regular files and directories only), in this same change.
            d.flags = inode.type().isSpecial() ? 0 : (dir.flags & Dinode.FLAG_JDATA)
                    | Dinode.flagBits(FileFlag.inheritedFrom(dir.fileFlags(), inode.type()));
            d.rdev = inode.rdev();
            d.atime = d.mtime = d.ctime = d.btime = inode.now();
            volume.add(d);
            if (inode.target() != null) {
                volume.setContent(d, inode.target());
            }
            return d;
        }

        @Override
        public void addEntry(Dinode dir, String name, long ino, FileType type) throws IOException {
            entriesOf(dir).put(name, new Entries.Entry(ino, type));
            changedDirectories.add(dir.ino);
        }

        @Override
        public void replaceEntry(Dinode dir, String name, long ino, FileType type) throws IOException {
            addEntry(dir, name, ino, type);
        }

        @Override
        public void removeEntry(Dinode dir, String name) throws IOException {
            entriesOf(dir).remove(name);
            changedDirectories.add(dir.ino);
        }

        @Override
        public void changed(Dinode inode) {
            volume.dirtyDinode(inode);
        }

        /** A dinode without a name that gets one again is a live dinode again. */
        @Override
        public void linking(Dinode inode) {
            volume.setState(inode.ino, ResourceGroup.DINODE);
        }

        /**
         * At zero names the dinode is marked unlinked until evict (or the next mount) frees it; on a
         * cluster node, once no node has it open ({@link Iopen}).
         */
        @Override
        public void orphaned(Dinode inode) {
            volume.setState(inode.ino, ResourceGroup.UNLINKED);
        }

        @Override
        public void freeDirectory(Dinode dir) {
            removed.add(dir);
        }

        /** Stores the changed directories' entries, then destroys the removed directories. */
        void finish() throws IOException {
            for (long ino : changedDirectories) {
                Dinode dir = volume.dinode(ino);
                volume.setContent(dir, Entries.encodeDirectory(directories.get(ino)));
            }
            for (Dinode dir : removed) {
                destroy(dir);
            }
        }
    }
}
