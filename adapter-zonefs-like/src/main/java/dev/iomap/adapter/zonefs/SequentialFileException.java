package dev.iomap.adapter.zonefs;

import dev.iomap.api.NotSupportedException;
import java.io.Serial;

/**
 * A sequential zone file refused an operation that its zone cannot do: a write anywhere but at the
 * end of the file (an overwrite, or a write leaving a hole), a shared writable mapping, zeroing
 * written blocks, or a truncate to a size other than 0 (zone reset) or the zone capacity (zone
 * finish). zonefs answers these with {@code EINVAL} or {@code EPERM}, which {@link #refusal()} says
 * (for FUSE); nothing was changed.
 */
public class SequentialFileException extends NotSupportedException {
    @Serial
    private static final long serialVersionUID = 1L;

    /**
     * @param message the file, what was asked and what the file accepts
     * @param refusal {@link Refusal#INVALID_ARGUMENT} for a write, mapping or zeroing (zonefs' EINVAL),
     *     {@link Refusal#NOT_PERMITTED} for a truncate (zonefs' EPERM)
     */
    public SequentialFileException(String message, Refusal refusal) {
        super(message, refusal);
    }
}
