package dev.iomap.core.mm;

/**
 * The folio order a write of a given length would like: the kernel's {@code fgf_set_order(len)}.
 * A hint only: the page cache raises it to the mapping's minimum order, caps it at the largest
 * ({@link PageCache#orderAt}) and falls back to smaller orders, never below the minimum and never
 * failing for it.
 */
public final class FolioOrder {

    private FolioOrder() {
    }

    /**
     * The largest order whose folio is no larger than {@code len} (the kernel's {@code fgf_set_order}).
     *
     * @param len bytes the caller is about to write, at least 0
     * @param pageShift log2 of the page size
     * @return {@code floor(log2(len)) - pageShift}, or 0 when {@code len} is at most one page
     */
    public static int hint(long len, int pageShift) {
        if (len <= 0) {
            return 0;
        }
        int shift = 63 - Long.numberOfLeadingZeros(len);
        return shift <= pageShift ? 0 : shift - pageShift;
    }
}
