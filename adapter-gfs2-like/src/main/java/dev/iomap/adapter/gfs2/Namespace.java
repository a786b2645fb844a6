package dev.iomap.adapter.gfs2;

import dev.iomap.adapter.support.ns.PosixRules;
import dev.iomap.adapter.support.ns.XattrSet;
import dev.iomap.api.AttributeChange;
import dev.iomap.api.DirEntry;
import dev.iomap.api.FileNames;
import dev.iomap.api.FileStat;
import dev.iomap.api.FileType;
import dev.iomap.api.NewInodeAttributes;
import dev.iomap.api.NoSuchAttributeException;
import dev.iomap.api.XattrMode;
import dev.iomap.spi.FileOps;
import dev.iomap.spi.InodeOps;
import dev.iomap.spi.MountedFileSystem;
import dev.iomap.spi.SuperOps;
import dev.iomap.spi.XattrOps;
import java.io.IOException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.NotLinkException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The POSIX namespace of a gfs2-like mount: directories (entries stuffed in the dinode while they
 * fit, else in a chain), hard and symbolic links, modes, owners, times and extended attributes. Every
 * change joins the running transaction under the metadata lock, so one operation commits whole or
 * not at all.
 */
abstract class Namespace implements MountedFileSystem, SuperOps, InodeOps, FileOps, XattrOps {
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
            Entries.Entry e = entries(dinodeOf(dirIno, FileType.DIRECTORY)).get(name);
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

    private TreeMap<String, Entries.Entry> entries(Dinode dir) throws IOException {
        return Entries.decodeDirectory(dir.content, dir.ino);
    }

    private void store(Dinode dir, TreeMap<String, Entries.Entry> entries, Instant now) throws IOException {
        volume.setContent(dir, Entries.encodeDirectory(entries));
        dir.mtime = now;
        dir.ctime = now;
    }

    @Override
    public int blockSize() {
        return volume.blockSize;
    }

    @Override
    public long rootIno() {
        return volume.layout.rootIno();
    }

    @Override
    public FileStat getattr(long ino) throws IOException {
        return glocked(NodeLocks.Plan.shared(ino), () -> read(() -> {
            Dinode d = volume.dinode(ino);
            return new FileStat(ino, d.type, d.size, (d.blocks + 1) * blockSize(), d.nlink, d.mode, d.uid, d.gid,
                    d.atime, d.mtime, d.ctime, d.btime);
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
            long ino = change(() -> newInode(dirIno, name, type, attributes, null).ino);
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

    private Dinode newInode(long dirIno, String name, FileType type, NewInodeAttributes attributes, byte[] target)
            throws IOException {
        Dinode dir = dinodeOf(dirIno, FileType.DIRECTORY);
        TreeMap<String, Entries.Entry> entries = entries(dir);
        if (entries.containsKey(name)) {
            throw new FileAlreadyExistsException(name);
        }
        long ino = volume.allocate(dirIno, dirIno, 1, ResourceGroup.DINODE)[0];
        Dinode d = new Dinode(ino, volume.layout);
        Instant now = Instant.now();
        d.type = type;
        d.mode = PosixRules.newMode(type, type == FileType.SYMLINK ? 0777 : attributes.mode(), dir.mode);
        d.uid = attributes.uid();
        d.gid = PosixRules.newGid(attributes, dir.mode, dir.gid);
        d.nlink = type == FileType.DIRECTORY ? 2 : 1;
        d.parent = dirIno;
        d.flags = dir.flags & Dinode.FLAG_JDATA;
        d.atime = d.mtime = d.ctime = d.btime = now;
        volume.add(d);
        if (target != null) {
            volume.setContent(d, target);
        }
        if (type == FileType.DIRECTORY) {
            dir.nlink++;
        }
        entries.put(name, new Entries.Entry(ino, type));
        store(dir, entries, now);
        return d;
    }

    @Override
    public long symlink(long dirIno, String name, byte[] target, NewInodeAttributes attributes) throws IOException {
        beforeNewInode();
        return glocked(NodeLocks.Plan.allocatingOnly(newInodeBlocks(name, target.length), dirIno), () -> {
            long ino = change(() -> newInode(dirIno, name, FileType.SYMLINK, attributes, target.clone()).ino);
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
        glocked(NodeLocks.Plan.allocatingOnly(newEntryBlocks(name), ino, dirIno), () -> change(() -> {
            Dinode dir = dinodeOf(dirIno, FileType.DIRECTORY);
            Dinode d = volume.dinode(ino);
            TreeMap<String, Entries.Entry> entries = entries(dir);
            if (entries.containsKey(name)) {
                throw new FileAlreadyExistsException(name);
            }
            Instant now = Instant.now();
            entries.put(name, new Entries.Entry(ino, d.type));
            store(dir, entries, now);
            d.nlink++;
            d.ctime = now;
            volume.setState(ino, ResourceGroup.DINODE);
            volume.dirtyDinode(d);
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
            for (Map.Entry<String, Entries.Entry> e : entries(dinodeOf(dirIno, FileType.DIRECTORY)).entrySet()) {
                list.add(new DirEntry(e.getKey(), e.getValue().ino(), e.getValue().type()));
            }
            return list;
        }));
    }

    @Override
    public void unlink(long dirIno, String name) throws IOException {
        glocked(NodeLocks.Plan.exclusive(dirIno), () -> glocked(NodeLocks.Plan.allocating(entryIno(dirIno, name)),
                () -> change(() -> {
            Dinode dir = dinodeOf(dirIno, FileType.DIRECTORY);
            TreeMap<String, Entries.Entry> entries = entries(dir);
            Entries.Entry e = entries.get(name);
            if (e == null) {
                throw new NoSuchFileException(name);
            }
            if (e.type() == FileType.DIRECTORY) {
                throw new java.nio.file.FileSystemException(name, null, "is a directory");
            }
            Instant now = Instant.now();
            entries.remove(name);
            store(dir, entries, now);
            dropName(volume.dinode(e.ino()), now);
            return null;
        })));
    }

    /**
     * One name less: at zero the dinode is marked unlinked until evict (or the next mount) frees it; on a
     * cluster node, once no node has it open ({@link Iopen}).
     */
    private void dropName(Dinode d, Instant now) {
        d.nlink = d.type == FileType.DIRECTORY ? 0 : d.nlink - 1;
        d.ctime = now;
        if (d.nlink == 0) {
            volume.setState(d.ino, ResourceGroup.UNLINKED);
        }
        volume.dirtyDinode(d);
    }

    @Override
    public void rmdir(long dirIno, String name) throws IOException {
        glocked(NodeLocks.Plan.exclusive(dirIno), () -> glocked(NodeLocks.Plan.allocating(entryIno(dirIno, name)),
                () -> change(() -> {
            Dinode dir = dinodeOf(dirIno, FileType.DIRECTORY);
            TreeMap<String, Entries.Entry> entries = entries(dir);
            Entries.Entry e = entries.get(name);
            if (e == null) {
                throw new NoSuchFileException(name);
            }
            Dinode victim = dinodeOf(e.ino(), FileType.DIRECTORY);
            if (!entries(victim).isEmpty()) {
                throw new DirectoryNotEmptyException(name);
            }
            Instant now = Instant.now();
            entries.remove(name);
            dir.nlink--;
            store(dir, entries, now);
            destroy(victim);
            return null;
        })));
    }

    @Override
    public long rename(long fromDir, String fromName, long toDir, String toName) throws IOException {
        return glocked(NodeLocks.Plan.exclusive(fromDir, toDir).withRename(), () -> glocked(
                NodeLocks.Plan.allocating(entryIno(fromDir, fromName), entryIno(toDir, toName)),
                () -> renameLocked(fromDir, fromName, toDir, toName)));
    }

    private long renameLocked(long fromDir, String fromName, long toDir, String toName) throws IOException {
        return change(() -> {
            Dinode from = dinodeOf(fromDir, FileType.DIRECTORY);
            Dinode to = dinodeOf(toDir, FileType.DIRECTORY);
            TreeMap<String, Entries.Entry> fromEntries = entries(from);
            Entries.Entry moving = fromEntries.get(fromName);
            if (moving == null) {
                throw new NoSuchFileException(fromName);
            }
            TreeMap<String, Entries.Entry> toEntries = fromDir == toDir ? fromEntries : entries(to);
            Entries.Entry replaced = toEntries.get(toName);
            Instant now = Instant.now();
            long lost = -1;
            if (replaced != null) {
                Dinode victim = volume.dinode(replaced.ino());
                if (victim.type == FileType.DIRECTORY) {
                    if (moving.type() != FileType.DIRECTORY) {
                        throw new java.nio.file.FileSystemException(toName, null, "is a directory");
                    }
                    if (!entries(victim).isEmpty()) {
                        throw new DirectoryNotEmptyException(toName);
                    }
                    to.nlink--;
                } else if (moving.type() == FileType.DIRECTORY) {
                    throw new NotDirectoryException(toName);
                }
                dropName(victim, now);
                lost = victim.nlink == 0 ? victim.ino : -1;
            }
            fromEntries.remove(fromName);
            toEntries.put(toName, moving);
            Dinode d = volume.dinode(moving.ino());
            d.ctime = now;
            if (moving.type() == FileType.DIRECTORY && fromDir != toDir) {
                d.parent = toDir;
                from.nlink--;
                to.nlink++;
            }
            volume.dirtyDinode(d);
            store(from, fromEntries, now);
            if (fromDir != toDir) {
                store(to, toEntries, now);
            }
            if (lost >= 0 && replaced.type() == FileType.DIRECTORY) {
                destroy(volume.dinode(lost));
                return -1L;
            }
            return lost;
        });
    }

    @Override
    public void exchange(long dir1, String name1, long dir2, String name2) throws IOException {
        glocked(NodeLocks.Plan.exclusive(dir1, dir2).withRename(), () -> glocked(
                NodeLocks.Plan.allocating(entryIno(dir1, name1), entryIno(dir2, name2)),
                () -> exchangeLocked(dir1, name1, dir2, name2)));
    }

    private Void exchangeLocked(long dir1, String name1, long dir2, String name2) throws IOException {
        return change(() -> {
            Dinode d1 = dinodeOf(dir1, FileType.DIRECTORY);
            Dinode d2 = dinodeOf(dir2, FileType.DIRECTORY);
            TreeMap<String, Entries.Entry> e1 = entries(d1);
            TreeMap<String, Entries.Entry> e2 = dir1 == dir2 ? e1 : entries(d2);
            Entries.Entry a = e1.get(name1);
            Entries.Entry b = e2.get(name2);
            if (a == null || b == null) {
                throw new NoSuchFileException(a == null ? name1 : name2);
            }
            Instant now = Instant.now();
            e1.put(name1, b);
            e2.put(name2, a);
            if (dir1 != dir2) {
                moveDirectory(a, d1, d2, now);
                moveDirectory(b, d2, d1, now);
            }
            for (Entries.Entry e : List.of(a, b)) {
                Dinode d = volume.dinode(e.ino());
                d.ctime = now;
                volume.dirtyDinode(d);
            }
            store(d1, e1, now);
            if (dir1 != dir2) {
                store(d2, e2, now);
            }
            return null;
        });
    }

    private void moveDirectory(Entries.Entry e, Dinode from, Dinode to, Instant now) throws IOException {
        if (e.type() != FileType.DIRECTORY) {
            return;
        }
        Dinode d = volume.dinode(e.ino());
        d.parent = to.ino;
        from.nlink--;
        to.nlink++;
        from.ctime = now;
        to.ctime = now;
    }

    @Override
    public SuperOps superOps() {
        return this;
    }

    @Override
    public InodeOps inodeOps() {
        return this;
    }

    @Override
    public FileOps fileOps() {
        return this;
    }

    @Override
    public XattrOps xattrOps() {
        return this;
    }
}
