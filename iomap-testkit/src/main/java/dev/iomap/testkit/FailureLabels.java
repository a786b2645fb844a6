package dev.iomap.testkit;

import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.LifecycleMethodExecutionExceptionHandler;
import org.junit.jupiter.api.extension.TestExecutionExceptionHandler;
import org.opentest4j.TestAbortedException;

/**
 * Puts the adapter and geometry in front of every failure of a contract test (and of its setup and
 * final fsck), so that a report that only says {@code AdapterContractSuite$Truncate[6]} still says
 * which mount failed.
 */
final class FailureLabels implements TestExecutionExceptionHandler, LifecycleMethodExecutionExceptionHandler {

    @Override
    public void handleTestExecutionException(ExtensionContext context, Throwable failure) throws Throwable {
        throw labelled(context, failure);
    }

    @Override
    public void handleBeforeEachMethodExecutionException(ExtensionContext context, Throwable failure)
            throws Throwable {
        throw labelled(context, failure);
    }

    @Override
    public void handleAfterEachMethodExecutionException(ExtensionContext context, Throwable failure)
            throws Throwable {
        throw labelled(context, failure);
    }

    private static Throwable labelled(ExtensionContext context, Throwable failure) {
        if (failure instanceof TestAbortedException
                || !(context.getTestInstance().orElse(null) instanceof AdapterContract contract)
                || contract.kit() == null) {
            return failure;
        }
        AssertionError labelled = new AssertionError("[" + contract.kit().label() + "] " + failure.getMessage(),
                failure);
        labelled.setStackTrace(failure.getStackTrace());
        return labelled;
    }
}
