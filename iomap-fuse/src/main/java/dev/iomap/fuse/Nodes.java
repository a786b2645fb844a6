package dev.iomap.fuse;

import dev.iomap.api.IomapFile;
import java.nio.file.NoSuchFileException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * The inodes the kernel knows, by FUSE node id: what libfuse's high-level API keeps for a path file
 * system, kept here so that a node id is the file system's own inode and a hard link is one kernel inode.
 *
 * <p><b>Node ids.</b> A node id is the file system's inode number ({@link #nodeid}), except that FUSE's
 * root is always node 1: the root's inode number and 1 trade places (an involution, so both ways are the
 * same function). {@code st_ino} is always the inode number.
 *
 * <p><b>Lookup counts.</b> Every reply that hands the kernel an inode (lookup, create, mkdir, symlink,
 * link, readdirplus entries other than {@code .} and {@code ..}) counts one lookup ({@link #lookedUp});
 * {@code forget} drops them ({@link #forget}). A node whose count reaches 0 is dropped once no known name
 * has it as parent (a name's parent stays while the child is known, so the child's path can be built).
 *
 * <p><b>Names.</b> The file system is path-based, so each node keeps the names (parent node id and
 * name) by which the kernel has met it; a node's path is built from its first name up to the root. An
 * unlink, rmdir or rename changes them as the kernel's dentries change; an inode whose last known name
 * is gone (an unlinked open file) has no path, and the mount answers for it from its open files
 * ({@link #openFile}).
 *
 * <p><b>Concurrency.</b> The table is guarded by its own monitor. {@link #namespace()} orders the file
 * system's path operations against the changes of names: an operation that builds a path and then uses
 * it holds the read lock from building to using; rename, unlink and rmdir hold the write lock, so no
 * operation ever acts on a path that named another inode by the time it used it.
 */
final class Nodes {
    /** FUSE's root node id ({@code FUSE_ROOT_ID}). */
    static final long ROOT = 1;
    /** Longest chain of names followed while building a path (PATH_MAX / 2: every name at least one byte). */
    private static final int MAX_DEPTH = 2048;

    /**
     * A name: a directory's node id and a name in it.
     *
     * @param parent the directory's node id
     * @param name the name, in {@link dev.iomap.api.FileNames}' form
     */
    record Name(long parent, String name) {
    }

    private static final class Node {
        final long nodeid;
        long lookups;
        int generation;
        /** Names whose parent is this node and whose child is still in the table. */
        int children;
        final List<Name> names = new ArrayList<>(1);
        final List<IomapFile> opens = new ArrayList<>(1);

        Node(long nodeid, int generation) {
            this.nodeid = nodeid;
            this.generation = generation;
        }
    }

    private final long rootIno;
    private final Map<Long, Node> nodes = new HashMap<>();
    private final Map<Name, Node> byName = new HashMap<>();
    private final ReentrantReadWriteLock namespace = new ReentrantReadWriteLock();

    /** @param rootIno the file system's inode number of its root directory */
    Nodes(long rootIno) {
        this.rootIno = rootIno;
        nodes.put(ROOT, new Node(ROOT, 0));
    }

    /** @return the lock that orders path operations (read) against renames and removals (write) */
    ReentrantReadWriteLock namespace() {
        return namespace;
    }

    /**
     * @param ino an inode number of the file system
     * @return its FUSE node id: {@code ino}, with the root's inode number and 1 swapped
     */
    long nodeid(long ino) {
        if (ino == rootIno) {
            return ROOT;
        }
        return ino == ROOT ? rootIno : ino;
    }

    /**
     * @param nodeid a FUSE node id
     * @return the inode number it stands for ({@link #nodeid} is its own inverse)
     */
    long ino(long nodeid) {
        return nodeid(nodeid);
    }

    /**
     * Counts one lookup of the inode the kernel now has under {@code name}, and remembers the name (taken
     * from whichever node had it before: that one no longer has it).
     *
     * @param nodeid the inode's node id
     * @param generation its generation (a node id reused for a new inode gets the new one)
     * @param name where the kernel met it; null for none (only counted)
     */
    synchronized void lookedUp(long nodeid, int generation, Name name) {
        Node node = nodes.computeIfAbsent(nodeid, id -> new Node(id, generation));
        node.generation = generation;
        if (nodeid != ROOT) {
            node.lookups++;
        }
        if (name != null) {
            addName(node, name);
        }
    }

    /**
     * One name on the way from the root to an inode found by number.
     *
     * @param nodeid the inode's node id
     * @param generation its generation
     * @param name its name under the previous step (the root for the first)
     */
    record Step(long nodeid, int generation, Name name) {
    }

    /**
     * Remembers the names from the root to an inode found by number ({@code open_by_handle_at}), in one
     * step under the table's monitor, counting no lookup: the kernel never met them; each stays while a
     * name below it is known, so that the inode has a path. One step, because a {@code forget} of a
     * sibling may drop a directory of the chain between two of its names.
     *
     * @param chain the names, from the root's child down to the inode
     */
    synchronized void passedThrough(List<Step> chain) {
        for (Step step : chain) {
            Node node = nodes.computeIfAbsent(step.nodeid(), id -> new Node(id, step.generation()));
            node.generation = step.generation();
            addName(node, step.name());
        }
    }

    /**
     * @param nodeid a node
     * @return whether the table can build its path (it is the root, or has a name up to the root)
     */
    synchronized boolean hasPath(long nodeid) {
        try {
            path(nodeid);
            return true;
        } catch (NoSuchFileException e) {
            return false;
        }
    }

    private void addName(Node node, Name name) {
        Node previous = byName.get(name);
        if (previous == node) {
            return;
        }
        if (previous != null) {
            removeName(previous, name);
        }
        Node parent = nodes.get(name.parent());
        if (parent == null) {
            return;
        }
        parent.children++;
        node.names.add(name);
        byName.put(name, node);
    }

    private void removeName(Node node, Name name) {
        if (!node.names.remove(name)) {
            return;
        }
        byName.remove(name);
        Node parent = nodes.get(name.parent());
        if (parent != null) {
            parent.children--;
            dropIfUnused(parent);
        }
    }

    private void dropIfUnused(Node node) {
        if (node.nodeid == ROOT || node.lookups > 0 || node.children > 0 || !node.opens.isEmpty()) {
            return;
        }
        nodes.remove(node.nodeid);
        for (Name name : List.copyOf(node.names)) {
            removeName(node, name);
        }
    }

    /**
     * Drops {@code count} lookups ({@code forget}, {@code batch_forget}); a node left with none and no
     * child names is forgotten. Unknown node ids and the root are ignored.
     *
     * @param nodeid the node
     * @param count lookups the kernel gives back
     */
    synchronized void forget(long nodeid, long count) {
        Node node = nodes.get(nodeid);
        if (node == null || nodeid == ROOT) {
            return;
        }
        node.lookups = Math.max(0, node.lookups - count);
        dropIfUnused(node);
    }

    /**
     * @param nodeid a node
     * @return its lookup count (0 for one the table does not hold)
     */
    synchronized long lookups(long nodeid) {
        Node node = nodes.get(nodeid);
        return node == null ? 0 : node.lookups;
    }

    /** @return the node ids the table holds now, the root included */
    synchronized java.util.List<Long> nodeids() {
        return java.util.List.copyOf(nodes.keySet());
    }

    /** @return how many nodes the table holds, the root included */
    synchronized int size() {
        return nodes.size();
    }

    /**
     * @param nodeid a node
     * @return its generation, 0 for an unknown node
     */
    synchronized int generation(long nodeid) {
        Node node = nodes.get(nodeid);
        return node == null ? 0 : node.generation;
    }

    /**
     * The path of a node, built from its first name up to the root. Call with {@link #namespace()}'s read
     * (or write) lock held until the path has been used.
     *
     * @param nodeid a node the kernel knows
     * @return its absolute path ({@code "/"} for the root)
     * @throws NoSuchFileException if the node is unknown or has no name left (unlinked)
     */
    synchronized String path(long nodeid) throws NoSuchFileException {
        if (nodeid == ROOT) {
            return "/";
        }
        var names = new ArrayList<String>();
        long at = nodeid;
        for (int depth = 0; at != ROOT; depth++) {
            Node node = nodes.get(at);
            if (node == null || node.names.isEmpty() || depth > MAX_DEPTH) {
                throw new NoSuchFileException("node " + nodeid, null, node == null ? "not known to the mount"
                        : "has no name left (unlinked)");
            }
            Name name = node.names.getFirst();
            names.add(name.name());
            at = name.parent();
        }
        var path = new StringBuilder();
        for (int i = names.size() - 1; i >= 0; i--) {
            path.append('/').append(names.get(i));
        }
        return path.toString();
    }

    /**
     * @param parent a directory's node id
     * @param name a name in it
     * @return the path of that name
     * @throws NoSuchFileException if the directory has no path
     */
    String path(long parent, String name) throws NoSuchFileException {
        String directory = path(parent);
        return directory.equals("/") ? "/" + name : directory + "/" + name;
    }

    /**
     * Forgets a name that unlink or rmdir removed (the inode stays known while the kernel has it).
     *
     * @param name the name removed
     */
    synchronized void removed(Name name) {
        Node node = byName.get(name);
        if (node != null) {
            removeName(node, name);
        }
    }

    /**
     * Moves a name after a rename; with {@code exchange}, the two names trade inodes.
     *
     * @param from the old name
     * @param to the new name (whatever it named before is no longer named by it, unless exchanged)
     * @param exchange whether it was {@code RENAME_EXCHANGE}
     */
    synchronized void renamed(Name from, Name to, boolean exchange) {
        Node moved = byName.get(from);
        Node other = byName.get(to);
        if (other != null) {
            removeName(other, to);
        }
        if (moved != null) {
            removeName(moved, from);
            addName(moved, to);
        }
        if (exchange && other != null) {
            addName(other, from);
        }
    }

    /**
     * @param nodeid a node the kernel opened
     * @param file the open file, answered for the node while it is open ({@link #openFile})
     */
    synchronized void opened(long nodeid, IomapFile file) {
        Node node = nodes.computeIfAbsent(nodeid, id -> new Node(id, 0));
        node.opens.add(file);
    }

    /**
     * @param nodeid the node of a file {@link #opened}
     * @param file the file, now released
     */
    synchronized void closed(long nodeid, IomapFile file) {
        Node node = nodes.get(nodeid);
        if (node != null) {
            node.opens.remove(file);
            dropIfUnused(node);
        }
    }

    /**
     * @param nodeid a node
     * @return one of its open files, or null: what answers for an inode without a name (an unlinked open file)
     */
    synchronized IomapFile openFile(long nodeid) {
        Node node = nodes.get(nodeid);
        return node == null || node.opens.isEmpty() ? null : node.opens.getFirst();
    }

    /**
     * @param nodeid a node
     * @return one of its files open for writing (not {@link dev.iomap.api.OpenFlag#READ_ONLY}), or null
     */
    synchronized IomapFile writableFile(long nodeid) {
        Node node = nodes.get(nodeid);
        if (node != null) {
            for (IomapFile file : node.opens) {
                if (!file.openFlags().contains(dev.iomap.api.OpenFlag.READ_ONLY)) {
                    return file;
                }
            }
        }
        return null;
    }
}
