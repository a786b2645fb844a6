package dev.iomap.testkit.fsx;

import java.io.Serial;
import java.nio.file.Path;

/** The model checker found the file differing from the model, or an operation failed. */
public final class FsxFailure extends AssertionError {
    @Serial
    private static final long serialVersionUID = 1L;

    private final transient Path opLog;
    private final int opIndex;

    FsxFailure(String report, Path opLog, int opIndex, Throwable cause) {
        super(report, cause);
        this.opLog = opLog;
        this.opIndex = opIndex;
    }

    /** @return the op log written for this failure (replay it with {@link FsxRunner#replay}), or null */
    public Path opLog() {
        return opLog;
    }

    /** @return the index of the operation after which the mismatch was seen */
    public int opIndex() {
        return opIndex;
    }
}
