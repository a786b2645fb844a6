package dev.iomap.core.vfs;

import dev.iomap.api.InvalidRangeException;
import dev.iomap.spi.FileOps;
import dev.iomap.core.CachedInode;
import java.io.IOException;

/** Reflink: checks, locking order and cache work around {@link FileOps#cloneRange}. */
final class CloneRange {

    private CloneRange() {
    }

    static void clone(FileOps files, CachedInode source, long srcOffset, CachedInode target,
            long dstOffset, long length) throws IOException {
        long block = target.blockSize();
        InvalidRangeException.checkRange("clone source", srcOffset, length, source.maxFileSize());
        InvalidRangeException.checkRange("clone target", dstOffset, length, target.maxFileSize());
        if (((srcOffset | dstOffset) & (block - 1)) != 0) {
            throw new InvalidRangeException("clone offsets must be multiples of the block size " + block);
        }
        // Lock in inode-number order so two opposite clones cannot deadlock.
        CachedInode first = source.ino() <= target.ino() ? source : target;
        CachedInode second = first == source ? target : source;
        first.withExclusiveLock(() -> second.withExclusiveLock(() -> {
            long srcSize = source.size();
            if (srcOffset + length > srcSize) {
                throw new InvalidRangeException("clone source range [" + srcOffset + ", +" + length
                        + ") passes its EOF " + srcSize);
            }
            if ((length & (block - 1)) != 0 && srcOffset + length != srcSize) {
                throw new InvalidRangeException("clone length must be a multiple of the block size "
                        + block + " unless the range ends at the source's EOF");
            }
            if ((length & (block - 1)) != 0 && dstOffset + length < target.size()) {
                // The partial EOF block of the source would land inside the target and the rest of
                // that block would read as zeroes (fstests generic/518): Linux refuses it too.
                throw new InvalidRangeException("clone of the source's partial last block must end at or"
                        + " past the target's EOF " + target.size() + ", not at " + (dstOffset + length));
            }
            if (source == target && srcOffset < dstOffset + length && dstOffset < srcOffset + length) {
                throw new InvalidRangeException("clone ranges of one file overlap");
            }
            long end = dstOffset + length;
            if (end > target.size()) {
                target.truncate(end, () -> files.setSize(target, end));
            }
            source.writeAndWait(srcOffset, srcOffset + length);
            long alignedEnd = (end + block - 1) & -block;
            target.flushAndInvalidate(dstOffset, alignedEnd);
            files.cloneRange(source, srcOffset, target, dstOffset, length);
        }));
    }
}
