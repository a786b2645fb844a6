package dev.iomap.api;

import java.io.Serial;
import java.nio.file.InvalidPathException;

/**
 * A name that cannot be carried as the byte string it stands for (the kernel's EILSEQ, "Invalid or
 * incomplete multibyte or wide character"): a {@code String} that is not in {@link FileNames}' form,
 * such as one holding a lone surrogate other than an escaped byte, or escaped bytes that spell valid
 * UTF-8 (which would give a second spelling of a name). Refused rather than mapped, so two names
 * never become one.
 */
public class UnrepresentableNameException extends InvalidPathException {
    @Serial
    private static final long serialVersionUID = 1L;

    /**
     * @param input the path or name refused
     * @param reason why, in a few words
     */
    public UnrepresentableNameException(String input, String reason) {
        super(input, reason);
    }
}
