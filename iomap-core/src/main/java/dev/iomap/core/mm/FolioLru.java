package dev.iomap.core.mm;

import java.util.concurrent.locks.ReentrantLock;

/**
 * The cache's folios in the order reclaim looks at them: a list threaded through the folios
 * themselves (no node per folio), oldest at the head. A folio joins at the tail when it is inserted
 * into a page cache and leaves when it is removed; reclaim takes folios from the head and puts back
 * at the tail those it keeps. The kernel's LRU lists of a memory node ({@code lruvec}), with the
 * second chance that {@code folio_referenced} and {@code PG_referenced} give a folio accessed since
 * reclaim last passed it; one list instead of an active and an inactive one.
 *
 * <p>A folio's place costs the hit path nothing: an access only stamps the folio
 * ({@link Folio#touch}), and reclaim compares that stamp with the one the folio carried when it was
 * listed ({@link #wasAccessedSinceListed}). Reclaim then costs in proportion to the folios it looks
 * at, not to every folio cached.
 *
 * <p>Thread-safe: one lock guards the links, taken inside a page cache's insert lock, never around
 * anything else.
 */
public final class FolioLru {
    private final ReentrantLock lock = new ReentrantLock();
    private Folio head;
    private Folio tail;
    private int size;

    /**
     * Lists a folio just inserted into its page cache, at the tail.
     *
     * @param folio the folio, not listed yet
     */
    void add(Folio folio) {
        lock.lock();
        try {
            link(folio);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Unlists a folio removed from its page cache; nothing if reclaim holds it (taken and not put
     * back) or it was never listed.
     *
     * @param folio the folio
     */
    void remove(Folio folio) {
        lock.lock();
        try {
            if (folio.lruListed) {
                unlink(folio);
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * Takes the oldest folio off the list: the caller then either drops it or puts it back.
     *
     * @return the folio, or null if the list is empty
     */
    public Folio takeOldest() {
        lock.lock();
        try {
            Folio folio = head;
            if (folio != null) {
                unlink(folio);
            }
            return folio;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Puts a folio taken by {@link #takeOldest} back at the tail, with its current access stamp,
     * unless it has been removed from its page cache meanwhile.
     *
     * @param folio the folio
     */
    public void putBack(Folio folio) {
        lock.lock();
        try {
            if (!folio.isRemoved() && !folio.lruListed) {
                link(folio);
            }
        } finally {
            lock.unlock();
        }
    }

    /** @return folios listed now */
    public int size() {
        lock.lock();
        try {
            return size;
        } finally {
            lock.unlock();
        }
    }

    /**
     * @param folio a folio taken by {@link #takeOldest}
     * @return whether it was accessed after it was last listed (its second chance)
     */
    static boolean wasAccessedSinceListed(Folio folio) {
        return folio.lastAccess() != folio.lruStamp;
    }

    private void link(Folio folio) {
        folio.lruStamp = folio.lastAccess();
        folio.lruPrev = tail;
        folio.lruNext = null;
        if (tail == null) {
            head = folio;
        } else {
            tail.lruNext = folio;
        }
        tail = folio;
        folio.lruListed = true;
        size++;
    }

    private void unlink(Folio folio) {
        Folio prev = folio.lruPrev;
        Folio next = folio.lruNext;
        if (prev == null) {
            head = next;
        } else {
            prev.lruNext = next;
        }
        if (next == null) {
            tail = prev;
        } else {
            next.lruPrev = prev;
        }
        folio.lruPrev = null;
        folio.lruNext = null;
        folio.lruListed = false;
        size--;
    }
}
