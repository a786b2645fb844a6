package dev.iomap.adapter.bcachefs;

import dev.iomap.adapter.support.ns.PosixRules;
import dev.iomap.adapter.support.ns.XattrSet;
import dev.iomap.api.AttributeChange;
import dev.iomap.api.DirEntry;
import dev.iomap.api.FileNames;
import dev.iomap.api.FileStat;
import dev.iomap.api.FileType;
import dev.iomap.api.NewInodeAttributes;
import dev.iomap.api.NoSpaceException;
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
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.NotLinkException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The POSIX namespace of a bcachefs-like mount: inodes, directory entries, symbolic links, hard
 * links, attributes and extended attributes, each operation one store transaction (so it is durable
 * whole or not at all). An inode that loses its last name gets a pending-orphan key in the same
 * transaction; {@link #destroy} (at evict, or at the next mount) frees it.
 */
abstract class Namespace implements MountedFileSystem, SuperOps, InodeOps, FileOps, XattrOps {
    /** Largest encoded attribute set of one inode. */
    static final int MAX_XATTR_BYTES = 256 * 1024;

    final BcachefsVolume volume;

    Namespace(BcachefsVolume volume) {
        this.volume = volume;
    }

    /** A change run under the metadata lock. */
    @FunctionalInterface
    interface Change<T> {
        T run() throws IOException;
    }

    /** Runs {@code change} under the metadata lock on a live mount. */
    <T> T locked(Change<T> change) throws IOException {
        volume.checkLive();
        volume.meta.lock();
        try {
            return change.run();
        } finally {
            volume.meta.unlock();
        }
    }

    /** Frees an inode with no name: its extents (in batches), blobs and record. Caller holds the lock. */
    abstract void destroy(long ino) throws IOException;

    InodeRecord inodeOf(long ino, FileType type) throws IOException {
        InodeRecord r = volume.inode(ino);
        if (r.type != type) {
            if (type == FileType.DIRECTORY) {
                throw new NotDirectoryException("inode " + ino);
            }
            if (type == FileType.SYMLINK) {
                throw new NotLinkException("inode " + ino);
            }
            throw new NoSuchFileException("inode " + ino + " is a " + r.type);
        }
        return r;
    }

    private Dirents.Dirent entry(long dir, String name) throws IOException {
        inodeOf(dir, FileType.DIRECTORY);
        return Dirents.find(volume.store, dir, name).orElseThrow(() -> new NoSuchFileException(name));
    }

    private void noEntry(long dir, String name) throws IOException {
        inodeOf(dir, FileType.DIRECTORY);
        if (Dirents.find(volume.store, dir, name).isPresent()) {
            throw new FileAlreadyExistsException(name);
        }
    }

    private static void touched(InodeRecord dir, Instant now) {
        dir.mtime = now;
        dir.ctime = now;
    }

    @Override
    public int blockSize() {
        return volume.blockSize;
    }

    @Override
    public long rootIno() {
        return Keys.ROOT_INO;
    }

    @Override
    public FileStat getattr(long ino) throws IOException {
        return locked(() -> {
            InodeRecord r = volume.inode(ino);
            return new FileStat(ino, r.type, r.size, r.blocks * volume.blockSize, r.nlink, r.mode, r.uid, r.gid,
                    r.atime, r.mtime, r.ctime, r.btime);
        });
    }

    @Override
    public long lookup(long dirIno, String name) throws IOException {
        return locked(() -> entry(dirIno, name).ino());
    }

    @Override
    public long create(long dirIno, String name, FileType type) throws IOException {
        return create(dirIno, name, type, NewInodeAttributes.defaults(type));
    }

    @Override
    public long create(long dirIno, String name, FileType type, NewInodeAttributes attributes) throws IOException {
        return locked(() -> newInode(dirIno, name, type, attributes, null));
    }

    @Override
    public long symlink(long dirIno, String name, byte[] target, NewInodeAttributes attributes) throws IOException {
        return locked(() -> newInode(dirIno, name, FileType.SYMLINK, attributes, target.clone()));
    }

    private long newInode(long dirIno, String name, FileType type, NewInodeAttributes attributes, byte[] target)
            throws IOException {
        noEntry(dirIno, name);
        InodeRecord dir = volume.inode(dirIno);
        BcachefsVolume.Tx tx = volume.tx();
        InodeRecord r = new InodeRecord(volume.newIno(tx));
        Instant now = Instant.now();
        r.type = type;
        r.mode = PosixRules.newMode(type, type == FileType.SYMLINK ? 0777 : attributes.mode(), dir.mode);
        r.uid = attributes.uid();
        r.gid = PosixRules.newGid(attributes, dir.mode, dir.gid);
        r.nlink = type == FileType.DIRECTORY ? 2 : 1;
        r.parent = type == FileType.DIRECTORY ? dirIno : 0;
        r.atime = r.mtime = r.ctime = r.btime = now;
        if (target != null) {
            r.size = target.length;
            volume.writeBlob(tx, Keys.SYMLINKS, r.ino, target);
        }
        if (type == FileType.DIRECTORY) {
            dir.nlink++;
        }
        touched(dir, now);
        tx.update.put(Dirents.freeKey(volume.store, dirIno, name), Dirents.encode(r.ino, type, name));
        tx.put(r).put(dir);
        tx.commit();
        volume.cache(r);
        return r.ino;
    }

    @Override
    public byte[] readlink(long ino) throws IOException {
        return locked(() -> {
            inodeOf(ino, FileType.SYMLINK);
            return volume.readBlob(Keys.SYMLINKS, ino);
        });
    }

    @Override
    public void link(long ino, long dirIno, String name) throws IOException {
        locked(() -> {
            noEntry(dirIno, name);
            InodeRecord dir = volume.inode(dirIno);
            InodeRecord r = volume.inode(ino);
            BcachefsVolume.Tx tx = volume.tx();
            Instant now = Instant.now();
            if (r.nlink == 0) {
                tx.update.delete(Keys.pending(ino, Keys.PENDING_ORPHAN));
            }
            r.nlink++;
            r.ctime = now;
            touched(dir, now);
            tx.update.put(Dirents.freeKey(volume.store, dirIno, name), Dirents.encode(ino, r.type, name));
            tx.put(r).put(dir).commit();
            return null;
        });
    }

    @Override
    public FileStat setattr(long ino, AttributeChange change) throws IOException {
        locked(() -> {
            InodeRecord r = volume.inode(ino);
            if (change.isEmpty()) {
                return null;
            }
            change.mode().ifPresent(m -> r.mode = m);
            change.uid().ifPresent(u -> r.uid = u);
            change.gid().ifPresent(g -> r.gid = g);
            change.atime().ifPresent(t -> r.atime = t);
            change.mtime().ifPresent(t -> r.mtime = t);
            if (change.setsCtime()) {
                r.ctime = Instant.now();
            }
            volume.tx().put(r).commit();
            return null;
        });
        return getattr(ino);
    }

    private XattrSet xattrs(long ino) throws IOException {
        volume.inode(ino);
        byte[] bytes = volume.readBlob(Keys.XATTRS, ino);
        return bytes.length == 0 ? new XattrSet() : XattrSet.decode(bytes, "extended attributes of inode " + ino);
    }

    @Override
    public byte[] getxattr(long ino, String name) throws IOException {
        return locked(() -> {
            byte[] value = xattrs(ino).get(name);
            if (value == null) {
                throw new NoSuchAttributeException("inode " + ino, name);
            }
            return value;
        });
    }

    @Override
    public List<String> listxattr(long ino) throws IOException {
        return locked(() -> xattrs(ino).names());
    }

    @Override
    public void setxattr(long ino, String name, byte[] value, XattrMode mode) throws IOException {
        locked(() -> {
            XattrSet attrs = xattrs(ino);
            boolean exists = attrs.get(name) != null;
            if (mode == XattrMode.CREATE && exists) {
                throw new FileAlreadyExistsException(name);
            }
            if (mode == XattrMode.REPLACE && !exists) {
                throw new NoSuchAttributeException("inode " + ino, name);
            }
            if (attrs.sizeWith(name, value.length) > MAX_XATTR_BYTES) {
                throw new NoSpaceException("bcachefs-like: the extended attributes of inode " + ino
                        + " would pass " + MAX_XATTR_BYTES + " bytes");
            }
            attrs.put(name, value);
            storeXattrs(ino, attrs);
            return null;
        });
    }

    private void storeXattrs(long ino, XattrSet attrs) throws IOException {
        InodeRecord r = volume.inode(ino);
        BcachefsVolume.Tx tx = volume.tx();
        volume.writeBlob(tx, Keys.XATTRS, ino, attrs.isEmpty() ? new byte[0] : attrs.encode());
        r.ctime = Instant.now();
        tx.put(r).commit();
    }

    @Override
    public void removexattr(long ino, String name) throws IOException {
        locked(() -> {
            XattrSet attrs = xattrs(ino);
            if (!attrs.remove(name)) {
                throw new NoSuchAttributeException("inode " + ino, name);
            }
            storeXattrs(ino, attrs);
            return null;
        });
    }

    @Override
    public List<DirEntry> readdir(long dirIno) throws IOException {
        return locked(() -> {
            inodeOf(dirIno, FileType.DIRECTORY);
            List<DirEntry> list = new ArrayList<>();
            for (Dirents.Dirent d : Dirents.list(volume.store, dirIno)) {
                list.add(new DirEntry(d.name(), d.ino(), d.type()));
            }
            list.sort((a, b) -> FileNames.BYTE_ORDER.compare(a.name(), b.name()));
            return list;
        });
    }

    @Override
    public void unlink(long dirIno, String name) throws IOException {
        locked(() -> {
            Dirents.Dirent e = entry(dirIno, name);
            if (e.type() == FileType.DIRECTORY) {
                throw new FileSystemException(name, null, "is a directory");
            }
            InodeRecord dir = volume.inode(dirIno);
            Instant now = Instant.now();
            BcachefsVolume.Tx tx = volume.tx();
            tx.update.delete(e.key());
            touched(dir, now);
            dropName(tx, volume.inode(e.ino()), now);
            tx.put(dir).commit();
            return null;
        });
    }

    /** One name less; at zero the inode becomes a pending orphan until evict or the next mount frees it. */
    private void dropName(BcachefsVolume.Tx tx, InodeRecord r, Instant now) {
        r.nlink = r.type == FileType.DIRECTORY ? 0 : r.nlink - 1;
        r.ctime = now;
        if (r.nlink == 0) {
            tx.update.put(Keys.pending(r.ino, Keys.PENDING_ORPHAN), new byte[0]);
        }
        tx.put(r);
    }

    @Override
    public void rmdir(long dirIno, String name) throws IOException {
        locked(() -> {
            Dirents.Dirent e = entry(dirIno, name);
            inodeOf(e.ino(), FileType.DIRECTORY);
            if (!Dirents.isEmpty(volume.store, e.ino())) {
                throw new DirectoryNotEmptyException(name);
            }
            InodeRecord dir = volume.inode(dirIno);
            BcachefsVolume.Tx tx = volume.tx();
            tx.update.delete(e.key());
            dir.nlink--;
            touched(dir, Instant.now());
            freeSmallInode(tx, e.ino());
            tx.put(dir).commit();
            return null;
        });
    }

    /** Deletes an inode without extents (a directory or symlink) in {@code tx}. */
    void freeSmallInode(BcachefsVolume.Tx tx, long ino) throws IOException {
        volume.writeBlob(tx, Keys.XATTRS, ino, new byte[0]);
        volume.writeBlob(tx, Keys.SYMLINKS, ino, new byte[0]);
        tx.update.delete(Keys.pending(ino, Keys.PENDING_ORPHAN)).delete(Keys.pending(ino, Keys.PENDING_TRUNCATE));
        volume.deleteInode(tx, ino);
    }

    @Override
    public long rename(long fromDir, String fromName, long toDir, String toName) throws IOException {
        return locked(() -> {
            Dirents.Dirent moving = entry(fromDir, fromName);
            inodeOf(toDir, FileType.DIRECTORY);
            Optional<Dirents.Dirent> replaced = Dirents.find(volume.store, toDir, toName);
            InodeRecord from = volume.inode(fromDir);
            InodeRecord to = volume.inode(toDir);
            Instant now = Instant.now();
            BcachefsVolume.Tx tx = volume.tx();
            long lost = -1;
            if (replaced.isPresent()) {
                InodeRecord victim = volume.inode(replaced.get().ino());
                if (victim.type == FileType.DIRECTORY) {
                    if (moving.type() != FileType.DIRECTORY) {
                        throw new FileSystemException(toName, null, "is a directory");
                    }
                    if (!Dirents.isEmpty(volume.store, victim.ino)) {
                        throw new DirectoryNotEmptyException(toName);
                    }
                    to.nlink--;
                    freeSmallInode(tx, victim.ino);
                } else {
                    if (moving.type() == FileType.DIRECTORY) {
                        throw new NotDirectoryException(toName);
                    }
                    dropName(tx, victim, now);
                    lost = victim.nlink == 0 ? victim.ino : -1;
                }
                tx.update.put(replaced.get().key(), Dirents.encode(moving.ino(), moving.type(), toName));
            } else {
                tx.update.put(Dirents.freeKey(volume.store, toDir, toName),
                        Dirents.encode(moving.ino(), moving.type(), toName));
            }
            tx.update.delete(moving.key());
            InodeRecord r = volume.inode(moving.ino());
            r.ctime = now;
            if (moving.type() == FileType.DIRECTORY && fromDir != toDir) {
                r.parent = toDir;
                from.nlink--;
                to.nlink++;
            }
            touched(from, now);
            touched(to, now);
            tx.put(r).put(from).put(to).commit();
            return lost;
        });
    }

    @Override
    public void exchange(long dir1, String name1, long dir2, String name2) throws IOException {
        locked(() -> {
            Dirents.Dirent a = entry(dir1, name1);
            Dirents.Dirent b = entry(dir2, name2);
            InodeRecord d1 = volume.inode(dir1);
            InodeRecord d2 = volume.inode(dir2);
            Instant now = Instant.now();
            BcachefsVolume.Tx tx = volume.tx();
            tx.update.put(a.key(), Dirents.encode(b.ino(), b.type(), name1));
            tx.update.put(b.key(), Dirents.encode(a.ino(), a.type(), name2));
            if (dir1 != dir2) {
                moveDirectory(a, d1, d2);
                moveDirectory(b, d2, d1);
            }
            for (Dirents.Dirent e : List.of(a, b)) {
                InodeRecord r = volume.inode(e.ino());
                r.ctime = now;
                tx.put(r);
            }
            touched(d1, now);
            touched(d2, now);
            tx.put(d1).put(d2).commit();
            return null;
        });
    }

    private void moveDirectory(Dirents.Dirent e, InodeRecord from, InodeRecord to) throws IOException {
        if (e.type() != FileType.DIRECTORY) {
            return;
        }
        volume.inode(e.ino()).parent = to.ino;
        from.nlink--;
        to.nlink++;
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
