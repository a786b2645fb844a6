package dev.iomap.adapter.bcachefs;

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
import dev.iomap.api.NoSpaceException;
import dev.iomap.api.NoSuchAttributeException;
import dev.iomap.api.XattrMode;
import dev.iomap.spi.InodeOps;
import dev.iomap.spi.IomapInode;
import dev.iomap.spi.XattrOps;
import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.NotLinkException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The POSIX namespace of a bcachefs-like mount: inodes, directory entries, symbolic links, hard
 * links, attributes and extended attributes, each operation one store transaction (so it is durable
 * whole or not at all). An inode that loses its last name gets a pending-orphan key in the same
 * transaction; {@link #destroy} (at evict, or at the next mount) frees it.
 */
abstract class Namespace implements InodeOps, XattrOps {
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

    @Override
    public FileStat getattr(long ino) throws IOException {
        return locked(() -> {
            InodeRecord r = volume.inode(ino);
            return new FileStat(ino, r.type, r.size, r.blocks * volume.blockSize, r.nlink, r.mode, r.uid, r.gid,
                    r.atime, r.mtime, r.ctime, r.btime, AtomicWriteLimits.NONE, r.rdev);
        });
    }

    @Override
    public long lookup(long dirIno, String name) throws IOException {
        return locked(() -> PosixNamespace.lookup(new TxStore(), dirIno, name));
    }

    @Override
    public long create(long dirIno, String name, FileType type) throws IOException {
        return create(dirIno, name, type, NewInodeAttributes.defaults(type));
    }

    @Override
    public long create(long dirIno, String name, FileType type, NewInodeAttributes attributes) throws IOException {
        return change(store -> PosixNamespace.create(store, dirIno, name, type, attributes));
    }

    @Override
    public long mknod(long dirIno, String name, FileType type, long rdev, NewInodeAttributes attributes)
            throws IOException {
        return change(store -> PosixNamespace.mknod(store, dirIno, name, type, rdev, attributes));
    }

    @Override
    public long symlink(long dirIno, String name, byte[] target, NewInodeAttributes attributes) throws IOException {
        return change(store -> PosixNamespace.symlink(store, dirIno, name, target, attributes));
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
        change(store -> {
            PosixNamespace.link(store, ino, dirIno, name);
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

    /** Served from the cached record (read and cached from the store the first time). */
    @Override
    public Set<FileFlag> getflags(long ino) throws IOException {
        return locked(() -> InodeRecord.fileFlags(volume.inode(ino).flags));
    }

    /**
     * Flags change as any attribute: the record with the new flags and ctime in one transaction, durable
     * with the next journal flush (fsync of the inode, sync). {@link FileFlag#JOURNAL_DATA} is refused.
     */
    @Override
    public void setflags(long ino, Optional<IomapInode> cached, Set<FileFlag> flags) throws IOException {
        int bits = InodeRecord.flagBits(flags);
        locked(() -> {
            InodeRecord r = volume.inode(ino).copy();
            r.flags = bits;
            r.ctime = Instant.now();
            volume.tx().put(r).commit();
            volume.cache(r);
            return null;
        });
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
        change(store -> {
            PosixNamespace.unlink(store, dirIno, name);
            return null;
        });
    }

    @Override
    public void rmdir(long dirIno, String name) throws IOException {
        change(store -> {
            PosixNamespace.rmdir(store, dirIno, name);
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
        return change(store -> PosixNamespace.rename(store, fromDir, fromName, toDir, toName));
    }

    @Override
    public long renameWhiteout(long fromDir, String fromName, long toDir, String toName, NewInodeAttributes whiteout)
            throws IOException {
        return change(store -> PosixNamespace.renameWhiteout(store, fromDir, fromName, toDir, toName, whiteout));
    }

    @Override
    public void exchange(long dir1, String name1, long dir2, String name2) throws IOException {
        change(store -> {
            PosixNamespace.exchange(store, dir1, name1, dir2, name2);
            return null;
        });
    }

    /** One namespace change in one store transaction, as {@link PosixNamespace} uses it. */
    @FunctionalInterface
    private interface StoreChange<T> {
        T run(TxStore store) throws IOException;
    }

    /** Runs {@code change} under the metadata lock in one transaction, committed if it returns normally. */
    private <T> T change(StoreChange<T> change) throws IOException {
        return locked(() -> {
            TxStore store = new TxStore();
            T result = change.run(store);
            store.commit();
            return result;
        });
    }

    /**
     * The dirents and inodes of one store transaction: entries go into the transaction as they change,
     * inode records when it commits (so each is encoded once, in its final state).
     */
    private final class TxStore implements PosixNamespace.Store<InodeRecord> {
        private final BcachefsVolume.Tx tx = volume.tx();
        /** Entries found in this transaction, by directory and name, for their keys. */
        private final Map<String, Dirents.Dirent> found = new HashMap<>();
        private final Map<Long, InodeRecord> changed = new LinkedHashMap<>();
        private final List<InodeRecord> created = new ArrayList<>();

        @Override
        public InodeRecord inode(long ino) throws IOException {
            return volume.inode(ino);
        }

        @Override
        public Optional<DirEntry> find(InodeRecord dir, String name) throws IOException {
            Optional<Dirents.Dirent> entry = Dirents.find(volume.store, dir.ino, name);
            entry.ifPresent(e -> found.put(dir.ino + "/" + name, e));
            return entry.map(e -> new DirEntry(name, e.ino(), e.type()));
        }

        private Dirents.Dirent dirent(InodeRecord dir, String name) throws IOException {
            Dirents.Dirent entry = found.get(dir.ino + "/" + name);
            if (entry != null) {
                return entry;
            }
            return Dirents.find(volume.store, dir.ino, name).orElseThrow(() -> new NoSuchFileException(name));
        }

        @Override
        public boolean isEmpty(InodeRecord dir) throws IOException {
            return Dirents.isEmpty(volume.store, dir.ino);
        }

        @Override
        public InodeRecord allocate(InodeRecord dir, String name, PosixNamespace.NewInode inode) throws IOException {
            InodeRecord r = new InodeRecord(volume.newIno(tx));
            r.type = inode.type();
            r.mode = inode.mode();
            r.uid = inode.uid();
            r.gid = inode.gid();
            r.nlink = inode.linkCount();
            r.rdev = inode.rdev();
            // A new file or directory inherits the parent's SYNC, NO_DUMP, NO_ATIME and DAX, in this transaction.
            r.flags = InodeRecord.flagBits(FileFlag.inheritedFrom(InodeRecord.fileFlags(dir.flags), inode.type()));
            r.parent = inode.type() == FileType.DIRECTORY ? inode.dirIno() : 0;
            r.atime = r.mtime = r.ctime = r.btime = inode.now();
            if (inode.target() != null) {
                r.size = inode.target().length;
                volume.writeBlob(tx, Keys.SYMLINKS, r.ino, inode.target());
            }
            changed.put(r.ino, r);
            created.add(r);
            return r;
        }

        @Override
        public void addEntry(InodeRecord dir, String name, long ino, FileType type) throws IOException {
            tx.update.put(Dirents.freeKey(volume.store, dir.ino, name), Dirents.encode(ino, type, name));
        }

        @Override
        public void replaceEntry(InodeRecord dir, String name, long ino, FileType type) throws IOException {
            tx.update.put(dirent(dir, name).key(), Dirents.encode(ino, type, name));
        }

        @Override
        public void removeEntry(InodeRecord dir, String name) throws IOException {
            tx.update.delete(dirent(dir, name).key());
        }

        @Override
        public void changed(InodeRecord inode) {
            changed.put(inode.ino, inode);
        }

        /** An inode without a name that gets one again is no longer an orphan. */
        @Override
        public void linking(InodeRecord inode) {
            if (inode.nlink == 0) {
                tx.update.delete(Keys.pending(inode.ino, Keys.PENDING_ORPHAN));
            }
        }

        /** At zero names the inode becomes a pending orphan until evict or the next mount frees it. */
        @Override
        public void orphaned(InodeRecord inode) {
            tx.update.put(Keys.pending(inode.ino, Keys.PENDING_ORPHAN), new byte[0]);
        }

        @Override
        public void freeDirectory(InodeRecord dir) throws IOException {
            changed.remove(dir.ino);
            freeSmallInode(tx, dir.ino);
        }

        /** Puts every changed record and commits; caches the new inodes. */
        void commit() throws IOException {
            for (InodeRecord r : changed.values()) {
                tx.put(r);
            }
            tx.commit();
            for (InodeRecord r : created) {
                volume.cache(r);
            }
        }
    }
}
