package dev.iomap.adapter.support.ns;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.DirEntry;
import dev.iomap.api.FileType;
import dev.iomap.api.NewInodeAttributes;
import java.io.IOException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * {@link PosixNamespace} over an in-memory store that records every call: the POSIX errors, link counts,
 * parents and times, and that a refusal changes nothing.
 */
class PosixNamespaceTest {
    private static final long ROOT = 1;
    private static final Instant OLD = Instant.parse("2020-01-01T00:00:00Z");

    /** An inode of the memory store. */
    private static final class Node implements NamespaceInode {
        final long ino;
        final FileType type;
        final TreeMap<String, DirEntry> entries = new TreeMap<>();
        int mode = 0755;
        int gid;
        int nlink;
        long parent;
        Instant mtime = OLD;
        Instant ctime = OLD;

        Node(long ino, FileType type) {
            this.ino = ino;
            this.type = type;
        }

        @Override
        public long ino() {
            return ino;
        }

        @Override
        public FileType type() {
            return type;
        }

        @Override
        public int mode() {
            return mode;
        }

        @Override
        public int gid() {
            return gid;
        }

        @Override
        public int linkCount() {
            return nlink;
        }

        @Override
        public void setLinkCount(int count) {
            nlink = count;
        }

        @Override
        public void setParent(long dirIno) {
            parent = dirIno;
        }

        @Override
        public void setCtime(Instant now) {
            ctime = now;
        }

        @Override
        public void setMtimeAndCtime(Instant now) {
            mtime = now;
            ctime = now;
        }
    }

    /** Inodes in a map; records the changing calls it gets. */
    private static final class MemoryStore implements PosixNamespace.Store<Node> {
        final Map<Long, Node> nodes = new HashMap<>();
        final List<String> calls = new ArrayList<>();
        long next = ROOT;

        MemoryStore() {
            Node root = new Node(next++, FileType.DIRECTORY);
            root.nlink = 2;
            root.parent = ROOT;
            nodes.put(root.ino, root);
        }

        @Override
        public Node inode(long ino) throws NoSuchFileException {
            Node node = nodes.get(ino);
            if (node == null) {
                throw new NoSuchFileException("inode " + ino);
            }
            return node;
        }

        @Override
        public Optional<DirEntry> find(Node dir, String name) {
            return Optional.ofNullable(dir.entries.get(name));
        }

        @Override
        public boolean isEmpty(Node dir) {
            return dir.entries.isEmpty();
        }

        @Override
        public Node allocate(Node dir, String name, PosixNamespace.NewInode inode) {
            Node node = new Node(next++, inode.type());
            node.mode = inode.mode();
            node.gid = inode.gid();
            node.nlink = inode.linkCount();
            node.parent = inode.dirIno();
            node.mtime = node.ctime = inode.now();
            nodes.put(node.ino, node);
            calls.add("allocate " + node.ino);
            return node;
        }

        @Override
        public void addEntry(Node dir, String name, long ino, FileType type) {
            dir.entries.put(name, new DirEntry(name, ino, type));
            calls.add("add " + dir.ino + "/" + name);
        }

        @Override
        public void replaceEntry(Node dir, String name, long ino, FileType type) {
            dir.entries.put(name, new DirEntry(name, ino, type));
            calls.add("replace " + dir.ino + "/" + name);
        }

        @Override
        public void removeEntry(Node dir, String name) {
            dir.entries.remove(name);
            calls.add("remove " + dir.ino + "/" + name);
        }

        @Override
        public void changed(Node inode) {
            calls.add("changed " + inode.ino);
        }

        @Override
        public void orphaned(Node inode) {
            calls.add("orphaned " + inode.ino);
        }

        @Override
        public void freeDirectory(Node dir) {
            nodes.remove(dir.ino);
            calls.add("free " + dir.ino);
        }

        @Override
        public long parentOf(Node dir) {
            return dir.ino == ROOT ? -1 : dir.parent;
        }
    }

    private final MemoryStore store = new MemoryStore();

    private long mkdir(long dir, String name) throws IOException {
        return PosixNamespace.create(store, dir, name, FileType.DIRECTORY, NewInodeAttributes.defaults(FileType.DIRECTORY));
    }

    private long mkfile(long dir, String name) throws IOException {
        return PosixNamespace.create(store, dir, name, FileType.REGULAR, NewInodeAttributes.defaults(FileType.REGULAR));
    }

    @Test
    void aNewDirectoryCountsInItsParentAndSetsItsTimes() throws IOException {
        long a = mkdir(ROOT, "a");

        assertThat(store.nodes.get(ROOT).nlink).isEqualTo(3);
        assertThat(store.nodes.get(a).nlink).isEqualTo(2);
        assertThat(store.nodes.get(a).parent).isEqualTo(ROOT);
        assertThat(store.nodes.get(ROOT).mtime).isAfter(OLD).isEqualTo(store.nodes.get(a).mtime);
        assertThatThrownBy(() -> mkfile(ROOT, "a")).isInstanceOf(FileAlreadyExistsException.class);
        assertThatThrownBy(() -> mkfile(ROOT, "b/c")).isInstanceOf(java.nio.file.InvalidPathException.class);
    }

    @Test
    void aDirectoryInASetGroupIdDirectoryTakesItsGroupAndTheBit() throws IOException {
        store.nodes.get(ROOT).mode = 02775;
        store.nodes.get(ROOT).gid = 42;

        long a = PosixNamespace.create(store, ROOT, "a", FileType.DIRECTORY, new NewInodeAttributes(0700, 7, 8));

        assertThat(store.nodes.get(a).mode).isEqualTo(02700);
        assertThat(store.nodes.get(a).gid).isEqualTo(42);
    }

    @Test
    void unlinkAndRmdirRefuseTheOtherType() throws IOException {
        mkdir(ROOT, "d");
        mkfile(ROOT, "f");
        store.calls.clear();

        assertThatThrownBy(() -> PosixNamespace.unlink(store, ROOT, "d")).isInstanceOf(FileSystemException.class)
                .hasMessageContaining("is a directory");
        assertThatThrownBy(() -> PosixNamespace.rmdir(store, ROOT, "f")).isInstanceOf(NotDirectoryException.class);
        assertThatThrownBy(() -> PosixNamespace.unlink(store, ROOT, "x")).isInstanceOf(NoSuchFileException.class);
        assertThat(store.calls).isEmpty();
    }

    @Test
    void unlinkingTheLastNameOrphansTheFile() throws IOException {
        long f = mkfile(ROOT, "f");
        PosixNamespace.link(store, f, ROOT, "g");
        assertThat(store.nodes.get(f).nlink).isEqualTo(2);

        PosixNamespace.unlink(store, ROOT, "f");
        assertThat(store.calls).doesNotContain("orphaned " + f);
        PosixNamespace.unlink(store, ROOT, "g");

        assertThat(store.nodes.get(f).nlink).isZero();
        assertThat(store.calls).contains("orphaned " + f);
    }

    @Test
    void aHardLinkToADirectoryIsRefused() throws IOException {
        long d = mkdir(ROOT, "d");
        store.calls.clear();

        assertThatThrownBy(() -> PosixNamespace.link(store, d, ROOT, "e")).isInstanceOf(FileSystemException.class)
                .hasMessageContaining("hard link to a directory");
        assertThat(store.calls).isEmpty();
    }

    @Test
    void renameOverAFileReturnsItWhenItLostItsLastName() throws IOException {
        long a = mkfile(ROOT, "a");
        long b = mkfile(ROOT, "b");

        long lost = PosixNamespace.rename(store, ROOT, "a", ROOT, "b");

        assertThat(lost).isEqualTo(b);
        assertThat(store.nodes.get(b).nlink).isZero();
        assertThat(store.nodes.get(ROOT).entries).containsOnlyKeys("b");
        assertThat(store.nodes.get(ROOT).entries.get("b").ino()).isEqualTo(a);
    }

    @Test
    void renameOfADirectoryMovesItsParentLinkAndSetsBothParentsTimes() throws IOException {
        long from = mkdir(ROOT, "from");
        long to = mkdir(ROOT, "to");
        long d = mkdir(from, "d");
        store.nodes.get(from).mtime = OLD;
        store.nodes.get(to).mtime = OLD;

        assertThat(PosixNamespace.rename(store, from, "d", to, "d")).isEqualTo(-1);

        assertThat(store.nodes.get(from).nlink).isEqualTo(2);
        assertThat(store.nodes.get(to).nlink).isEqualTo(3);
        assertThat(store.nodes.get(d).parent).isEqualTo(to);
        assertThat(store.nodes.get(from).mtime).isAfter(OLD);
        assertThat(store.nodes.get(to).mtime).isAfter(OLD);
        assertThat(store.nodes.get(d).ctime).isAfter(OLD);
    }

    @Test
    void renameOverADirectoryNeedsItEmptyAndFreesItLast() throws IOException {
        mkdir(ROOT, "a");
        long b = mkdir(ROOT, "b");
        long c = mkdir(b, "c");
        mkfile(ROOT, "f");

        assertThatThrownBy(() -> PosixNamespace.rename(store, ROOT, "a", ROOT, "b"))
                .isInstanceOf(DirectoryNotEmptyException.class);
        assertThatThrownBy(() -> PosixNamespace.rename(store, ROOT, "f", ROOT, "b"))
                .isInstanceOf(FileSystemException.class).hasMessageContaining("is a directory");
        assertThatThrownBy(() -> PosixNamespace.rename(store, ROOT, "a", ROOT, "f"))
                .isInstanceOf(NotDirectoryException.class);
        PosixNamespace.rmdir(store, b, "c");
        assertThat(store.nodes).doesNotContainKey(c);
        assertThat(store.nodes.get(ROOT).nlink).isEqualTo(4);
        store.calls.clear();

        assertThat(PosixNamespace.rename(store, ROOT, "a", ROOT, "b")).isEqualTo(-1);

        assertThat(store.nodes).doesNotContainKey(b);
        assertThat(store.nodes.get(ROOT).nlink).isEqualTo(3);
        assertThat(store.calls.getLast()).isEqualTo("free " + b);
    }

    @Test
    void aDirectoryCannotMoveIntoItsOwnSubtree() throws IOException {
        long a = mkdir(ROOT, "a");
        long b = mkdir(a, "b");
        store.calls.clear();

        assertThatThrownBy(() -> PosixNamespace.rename(store, ROOT, "a", b, "a"))
                .isInstanceOf(FileSystemException.class).hasMessageContaining("into itself");
        assertThatThrownBy(() -> PosixNamespace.exchange(store, ROOT, "a", a, "b"))
                .isInstanceOf(FileSystemException.class).hasMessageContaining("into itself");
        assertThat(store.calls).isEmpty();
    }

    @Test
    void exchangeOfADirectoryAndAFileAcrossParentsMovesTheLinkCount() throws IOException {
        long p = mkdir(ROOT, "p");
        long q = mkdir(ROOT, "q");
        long d = mkdir(p, "d");
        long f = mkfile(q, "f");

        PosixNamespace.exchange(store, p, "d", q, "f");

        assertThat(store.nodes.get(p).entries.get("d").ino()).isEqualTo(f);
        assertThat(store.nodes.get(p).entries.get("d").type()).isEqualTo(FileType.REGULAR);
        assertThat(store.nodes.get(q).entries.get("f").ino()).isEqualTo(d);
        assertThat(store.nodes.get(d).parent).isEqualTo(q);
        assertThat(store.nodes.get(p).nlink).isEqualTo(2);
        assertThat(store.nodes.get(q).nlink).isEqualTo(3);
        assertThat(store.nodes.get(f).nlink).isEqualTo(1);
        assertThatThrownBy(() -> PosixNamespace.exchange(store, p, "d", q, "x"))
                .isInstanceOf(NoSuchFileException.class);
    }
}
