package dev.iomap.spi;

import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;

/**
 * One contiguous file range and what backs it, as {@link IomapOps#begin} or
 * {@link WritebackContext#addToIoend} is given it: the kernel's {@code struct iomap}.
 *
 * <p>Immutable. {@code offset} and {@code length} are block aligned (a length may end at EOF). For
 * {@link IomapType#MAPPED} and {@link IomapType#UNWRITTEN} the range starts at device byte
 * {@code address}; for the other types {@code address} is {@link #NULL_ADDR}. {@code inlineData} is
 * present only for {@link IomapType#INLINE}. The {@code validityCookie} is an adapter-chosen sequence
 * number that {@link WriteOps#valid} compares with the inode's current one.
 *
 * <h2>Inline data</h2>
 * An {@link IomapType#INLINE} mapping carries the file's bytes in {@code inlineData}: byte {@code i}
 * of the array is file byte {@code offset + i}, for {@code i < length}; the array may be longer
 * (the rest is ignored). The array is the adapter's own buffer (the kernel's
 * {@code iomap->inline_data} pointing into the inode's metadata block), lent to the core until
 * {@link IomapOps#end} returns; the core never keeps it after that. What the core reads from it: file
 * bytes below EOF only (the bytes past EOF in the buffer need not be zero). What it writes into it:
 * a write or zeroing ({@link IomapRequest#WRITE}, {@link IomapRequest#ZERO}, a {@link IomapRequest#FAULT}
 * of a mapped store) copies the bytes it put in the page cache into the buffer before
 * {@link IomapOps#end} is called with {@code written} bytes (the kernel's
 * {@code iomap_write_end_inline}); persisting them, and the file size (already raised, see
 * {@link IomapInode#size()}), is the adapter's work in {@code end}. The core touches the buffer only
 * between {@code begin} and {@code end}, with the folio at offset 0 locked, so concurrent users of one
 * inline file take turns on that folio. Cached inline data is never dirty: writeback never sees it
 * and never calls {@link WritebackOps#writebackRange} for it (an {@code addToIoend} of an
 * {@code INLINE} is refused as the kernel's writeback refuses it).
 *
 * <p>As in the kernel, the core accepts an inline mapping only if it starts at file offset 0, ends
 * within the first page ({@code PageCacheOptions.pageSize()}; the first block when blocks are larger
 * than pages, whose folios hold at least one block), reaches EOF (the file's size is at
 * most {@link #end()} when {@link IomapOps#begin} returns it) and is its own read source (no separate
 * {@code srcmap}, and no {@code INLINE} srcmap under another iomap); anything else fails the call with
 * an {@link dev.iomap.api.IomapException} naming the mapping. A file leaves the inline state
 * (gfs2's unstuffing) when the adapter's {@code begin} moves the data to blocks of its own and
 * returns {@link IomapType#MAPPED}: the cached bytes stay as they are and are written back to those
 * blocks when next dirtied.
 *
 * @param offset file offset of the first byte, at least 0
 * @param length number of bytes, at least 1
 * @param type what backs the range
 * @param flags flags; copied, never null
 * @param address device byte address of {@code offset}, or {@link #NULL_ADDR}
 * @param inlineData the adapter's inline buffer for {@link IomapType#INLINE}, at least {@code length}
 *     bytes (see "Inline data" above), else null
 * @param validityCookie the adapter's sequence number when the mapping was made
 */
public record Iomap(
        long offset,
        long length,
        IomapType type,
        Set<IomapFlag> flags,
        long address,
        byte[] inlineData,
        long validityCookie) {

    /** The address of a range that has no blocks (the kernel's {@code IOMAP_NULL_ADDR}). */
    public static final long NULL_ADDR = -1L;

    /**
     * Checks the invariants above.
     *
     * @throws IllegalArgumentException if a range is negative or empty, type and address disagree, or
     *     inline data is missing, misplaced or shorter than {@code length}
     */
    public Iomap {
        Objects.requireNonNull(type, "type");
        if (offset < 0 || length <= 0 || offset + length < 0) {
            throw new IllegalArgumentException("bad iomap range offset=" + offset + " length=" + length);
        }
        boolean needsAddress = type == IomapType.MAPPED || type == IomapType.UNWRITTEN;
        if (needsAddress && address < 0) {
            throw new IllegalArgumentException(type + " iomap needs a device address, got " + address);
        }
        if (!needsAddress && address != NULL_ADDR) {
            throw new IllegalArgumentException(type + " iomap has no device address, got " + address);
        }
        if ((type == IomapType.INLINE) != (inlineData != null)) {
            throw new IllegalArgumentException("inline data goes with INLINE only");
        }
        if (inlineData != null && inlineData.length < length) {
            throw new IllegalArgumentException("INLINE iomap of " + length + " bytes has only "
                    + inlineData.length + " bytes of inline data");
        }
        flags = flags == null || flags.isEmpty() ? Set.of() : Set.copyOf(flags);
    }

    /**
     * A hole.
     *
     * @param offset file offset
     * @param length bytes
     * @return a {@link IomapType#HOLE} mapping
     */
    public static Iomap hole(long offset, long length) {
        return new Iomap(offset, length, IomapType.HOLE, Set.of(), NULL_ADDR, null, 0);
    }

    /**
     * Written blocks.
     *
     * @param offset file offset
     * @param length bytes
     * @param address device byte address of {@code offset}
     * @return a {@link IomapType#MAPPED} mapping
     */
    public static Iomap mapped(long offset, long length, long address) {
        return new Iomap(offset, length, IomapType.MAPPED, Set.of(), address, null, 0);
    }

    /** @return the first file offset past this mapping */
    public long end() {
        return offset + length;
    }

    /**
     * @param pos a file offset
     * @return whether {@code pos} lies inside this mapping
     */
    public boolean contains(long pos) {
        return pos >= offset && pos < end();
    }

    /**
     * @param flag a flag
     * @return whether the mapping carries it
     */
    public boolean has(IomapFlag flag) {
        return flags.contains(flag);
    }

    /**
     * The device address of a file offset inside this mapping (the kernel's {@code iomap_sector}, in
     * bytes).
     *
     * @param pos a file offset for which {@link #contains} is true
     * @return the device byte address backing {@code pos}
     * @throws IllegalStateException if the mapping has no device address
     */
    public long deviceAddress(long pos) {
        if (address == NULL_ADDR) {
            throw new IllegalStateException(type + " mapping has no device address");
        }
        return address + (pos - offset);
    }

    /**
     * Whether a block read through this mapping must be zeroed instead of read from the device: holes,
     * unwritten and delalloc extents, and freshly allocated ({@link IomapFlag#NEW}) blocks. The
     * mapping half of the kernel's {@code iomap_block_needs_zeroing}; the caller checks EOF.
     *
     * @return true if the device contents must not be used
     */
    public boolean needsZeroing() {
        return type.readsAsZeroes() || has(IomapFlag.NEW);
    }

    /**
     * A copy with other flags.
     *
     * @param newFlags the flags of the copy
     * @return the copy
     */
    public Iomap withFlags(Set<IomapFlag> newFlags) {
        return new Iomap(offset, length, type, newFlags, address, inlineData, validityCookie);
    }

    /**
     * A copy with one more flag.
     *
     * @param flag the flag to add
     * @return the copy
     */
    public Iomap plus(IomapFlag flag) {
        EnumSet<IomapFlag> copy = flags.isEmpty() ? EnumSet.noneOf(IomapFlag.class) : EnumSet.copyOf(flags);
        copy.add(flag);
        return withFlags(copy);
    }

    /**
     * A copy carrying a validity cookie.
     *
     * @param cookie the adapter's current sequence number
     * @return the copy
     */
    public Iomap withValidityCookie(long cookie) {
        return new Iomap(offset, length, type, flags, address, inlineData, cookie);
    }
}
