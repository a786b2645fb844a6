package dev.iomap.core.mm;

/**
 * The readahead state of one open file: the kernel's {@code struct file_ra_state}. It remembers the
 * current window ({@code start}, {@code size} pages, the last {@code asyncSize} of which are read
 * in the background, the first of those carrying the readahead marker) and where the previous read
 * ended, and decides from them whether a read miss looks sequential and how large the next window
 * is: the window starts at a few times the read and doubles (quadruples while small) up to the
 * maximum ({@code get_init_ra_size}, {@code get_next_ra_size}).
 *
 * <p>Thread-safe: its methods are atomic with respect to each other. Two threads reading through one
 * open file share one state, as in the kernel, and may each see the other's pattern as random.
 */
public final class ReadaheadState {
    /** First page of the current window. */
    private long start;
    /** Pages in the current window; 0 before the first window. */
    private long size;
    /** Pages at the window's end read in the background; the first of them carries the marker. */
    private long asyncSize;
    /** Page of the last byte the previous read returned, -1 before the first read. */
    private long prevIndex = -1;

    /** A new state: no window yet, no previous read (the kernel's {@code file_ra_state_init}). */
    public ReadaheadState() {
    }

    /**
     * Pages to read ahead of a reader: {@code [start, end)}, whose folio containing {@code marker}
     * gets the readahead marker.
     *
     * @param start first page
     * @param end page past the last
     * @param marker page whose folio carries the marker
     */
    public record Window(long start, long end, long marker) {
    }

    /**
     * A read miss at page {@code index} of a read needing {@code reqPages} pages from there: the
     * kernel's {@code page_cache_sync_ra}. A miss right after the previous read (or at page 0, or
     * one larger than the largest window, or at the end of the current window) starts a window; any
     * other miss is random and reads only what it needs, leaving the state alone.
     *
     * @param index page of the miss
     * @param reqPages pages the read still needs, at least 1
     * @param maxPages largest window, at least 1
     * @return the pages to read in the background beyond the {@code reqPages} the caller reads now
     *     (possibly none: {@code start == end}), or null for a random miss
     */
    public synchronized Window onMiss(long index, long reqPages, long maxPages) {
        if (size > 0 && index == start + size) {
            // the reader ran past the window before reaching its marker (or the marker was lost)
            start = index;
            size = Math.max(nextSize(size, maxPages), reqPages);
            asyncSize = size;
        } else if (index == 0 || reqPages > maxPages || (index >= prevIndex && index - prevIndex <= 1)) {
            start = index;
            size = Math.max(initSize(reqPages, maxPages), reqPages);
            asyncSize = size > reqPages ? size - reqPages : size;
        } else {
            return null;
        }
        long ahead = index + reqPages;
        long marker = start + size - asyncSize;
        if (marker < ahead) {
            // The marker would sit in what the caller reads now: the caller would reach it at once,
            // so the next window starts now, as the kernel's reader starts it when its batch holds
            // the marked folio.
            start += size;
            size = nextSize(size, maxPages);
            asyncSize = size;
            marker = start;
        }
        return new Window(ahead, Math.max(ahead, start + size), marker);
    }

    /**
     * A reader reached the folio {@code [folioIndex, folioIndex + folioPages)} carrying the marker:
     * the kernel's {@code page_cache_async_ra}. The next window follows the current one, its whole
     * length read in the background, the marker on its first folio.
     *
     * @param folioIndex first page of the marked folio
     * @param folioPages pages in it
     * @param maxPages largest window, at least 1
     * @return the next window
     */
    public synchronized Window onMarker(long folioIndex, long folioPages, long maxPages) {
        long expected = start + size - asyncSize;
        if (size > 0 && expected >= folioIndex && expected < folioIndex + folioPages) {
            start += size;
            size = nextSize(size, maxPages);
        } else {
            // another stream's marker, or this state was reset: go on after the marked folio
            start = folioIndex + folioPages;
            size = nextSize(Math.max(folioPages, 1), maxPages);
        }
        asyncSize = size;
        return new Window(start, start + size, start);
    }

    /**
     * Records where a read ended (the kernel's {@code ra->prev_pos}).
     *
     * @param lastIndex page of the last byte the read returned
     */
    public synchronized void readEnded(long lastIndex) {
        prevIndex = lastIndex;
    }

    /** @return the current window as {@code [start, size, asyncSize]}, for tests */
    public synchronized long[] window() {
        return new long[] {start, size, asyncSize};
    }

    /** The first window of a sequential stream: the kernel's {@code get_init_ra_size}. */
    static long initSize(long reqPages, long maxPages) {
        long rounded = Long.highestOneBit(Math.max(1, reqPages));
        if (rounded < reqPages) {
            rounded <<= 1;
        }
        if (rounded <= maxPages / 32) {
            return Math.min(rounded * 4, maxPages);
        }
        if (rounded <= maxPages / 4) {
            return rounded * 2;
        }
        return maxPages;
    }

    /** The window after one of {@code current} pages: the kernel's {@code get_next_ra_size}. */
    static long nextSize(long current, long maxPages) {
        if (current < maxPages / 16) {
            return current * 4;
        }
        if (current <= maxPages / 2) {
            return current * 2;
        }
        return maxPages;
    }

    @Override
    public synchronized String toString() {
        return "ReadaheadState[start=" + start + ", size=" + size + ", asyncSize=" + asyncSize
                + ", prevIndex=" + prevIndex + "]";
    }
}
