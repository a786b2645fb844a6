package dev.iomap.adapter.support;

import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Replay's revoke table, as jbd2's: for each revoked block, the newest sequence number of a complete
 * transaction revoking it. The scan (first pass) fills it; {@link #apply} (second pass) then takes the
 * transactions' images in log order, skipping each image whose sequence is below its block's newest
 * revoke. A transaction's own revoke never hides its own image: {@link Journal.Transaction} drops an
 * image revoked after it was logged, so an image a transaction carries was logged after any revoke
 * of the same block in it. Not thread-safe; one replay's.
 */
final class RevokeTable {
    private final Map<Long, Long> newestRevoke = new HashMap<>();
    private long revokesFound;

    /**
     * What the second pass produced.
     *
     * @param images the image each not-revoked block has after the newest transaction, in log order
     * @param imagesFound images in the transactions, the skipped ones included
     * @param imagesSkipped images not applied because a later transaction revoked their block
     * @param revokesFound revoke records in the transactions
     */
    record Applied(Map<Long, ByteBuffer> images, long imagesFound, long imagesSkipped, long revokesFound) {
    }

    /** Records the revokes of the complete transaction {@code sequence}; called in log order. */
    void add(JournalLog.Found transaction, long sequence) {
        for (long block : transaction.revokes()) {
            newestRevoke.merge(block, sequence, Math::max);
        }
        revokesFound += transaction.revokeCount();
    }

    /** @return whether the image of {@code block} logged by transaction {@code sequence} is revoked */
    boolean isRevoked(long block, long sequence) {
        Long revoke = newestRevoke.get(block);
        return revoke != null && sequence < revoke;
    }

    /**
     * The second pass.
     *
     * @param transactions the complete transactions, in log order
     * @param firstSequence the sequence number of the first
     * @return the images to apply and the counts
     */
    Applied apply(List<JournalLog.Found> transactions, long firstSequence) {
        Map<Long, ByteBuffer> images = new LinkedHashMap<>();
        long found = 0;
        long skipped = 0;
        long sequence = firstSequence;
        for (JournalLog.Found transaction : transactions) {
            found += transaction.imageCount();
            for (var image : transaction.images().entrySet()) {
                if (isRevoked(image.getKey(), sequence)) {
                    skipped++;
                } else {
                    images.put(image.getKey(), image.getValue());
                }
            }
            sequence++;
        }
        return new Applied(images, found, skipped, revokesFound);
    }
}
