package dev.iomap.api;

import java.io.Serial;
import java.nio.file.FileSystemException;

/** The file has no extended attribute of that name: the kernel's {@code ENODATA}. */
public class NoSuchAttributeException extends FileSystemException {
    @Serial
    private static final long serialVersionUID = 1L;

    /**
     * @param path the file
     * @param name the attribute asked for
     */
    public NoSuchAttributeException(String path, String name) {
        super(path, null, "no extended attribute '" + name + "' (No data available)");
    }
}
