package dev.iomap.api;

import java.io.Serial;

/**
 * An extended attribute's name or value is outside what Linux allows: {@link Kind#NAME} is the
 * kernel's {@code ERANGE} (empty name, or longer than {@value Xattrs#MAX_NAME_BYTES} bytes),
 * {@link Kind#VALUE} its {@code E2BIG} (value longer than {@value Xattrs#MAX_VALUE_BYTES} bytes). What
 * an adapter cannot fit beyond these limits is a {@link NoSpaceException} (ENOSPC), as on ext4.
 */
public class XattrLimitException extends IomapException {
    @Serial
    private static final long serialVersionUID = 1L;

    /** Which limit. */
    public enum Kind {
        /** The name is empty or too long: ERANGE. */
        NAME,
        /** The value is too long: E2BIG. */
        VALUE
    }

    private final Kind kind;

    /**
     * @param kind which limit
     * @param message the name and the limit
     */
    public XattrLimitException(Kind kind, String message) {
        super(message);
        this.kind = kind;
    }

    /** @return which limit was passed */
    public Kind kind() {
        return kind;
    }
}
