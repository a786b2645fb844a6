package dev.iomap.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.Capability;
import dev.iomap.testkit.fsx.FsxRunner;
import dev.iomap.testkit.toy.ToyAdapter;
import dev.iomap.testkit.toy.ToyFileSystem;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.discovery.DiscoverySelectors;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;

/**
 * {@link Capability#DENSE_FILES} on the toy, a filesystem without holes: declared, the seek, extent-report
 * and truncate suites and the model checker pass on it, holding it to exact seeks and whole-file
 * reports; undeclared, the same suites' hole tests fail on the same toy. The declaration is what
 * separates the two, so a format without holes needs no known-failure marks.
 */
class DenseFilesKitTest {
    private static final Path LOGS = Path.of("target", "fsx-logs");
    private static final Set<Capability> DENSE = dense();

    private static Set<Capability> dense() {
        EnumSet<Capability> capabilities = EnumSet.copyOf(ToyFileSystem.CAPABILITIES);
        capabilities.remove(Capability.PUNCH_HOLE);
        capabilities.add(Capability.DENSE_FILES);
        return capabilities;
    }

    private static AdapterFixture denseToy() {
        return ToyAdapter.fixture(LOGS, 300, DENSE);
    }

    private static AdapterFixture undeclaredToy() {
        return ToyAdapter.fixture(LOGS, 300, ToyFileSystem.CAPABILITIES);
    }

    /** Seek data and seek hole, declared dense. */
    @Nested
    class Seek extends SeekContract {
        @Override
        protected AdapterFixture fixture() {
            return denseToy();
        }
    }

    /** The extent report, declared dense. */
    @Nested
    class Fiemap extends FiemapContract {
        @Override
        protected AdapterFixture fixture() {
            return denseToy();
        }
    }

    /** Truncate, declared dense. */
    @Nested
    class Truncate extends TruncateContract {
        @Override
        protected AdapterFixture fixture() {
            return denseToy();
        }
    }

    @Test
    void theModelCheckerPassesADenseToyWithExactSeeks() throws Exception {
        assertThat(FsxRunner.run(ToyAdapter.fixture(LOGS, 2000, DENSE)).ops()).isEqualTo(2000);
    }

    @Test
    void undeclaredTheHoleTestsFailOnTheSameToy() {
        Set<String> holeTests = Set.of(
                "SeekContract.dataThenHoleThenDataAtBlockAndByteOffsets",
                "SeekContract.dirtyDataOverAHoleIsDataBeforeAndAfterWriteback",
                "SeekContract.truncateDownThenUpLeavesAHoleAfterTheLastBlockKept",
                "FiemapContract.dataIsCoveredWhileDirtyAndAfterWritebackAndHolesAreNot");
        assertThat(failures(UndeclaredSeek.class, UndeclaredFiemap.class)).isEqualTo(new TreeSet<>(holeTests));
    }

    /** @return the tests of {@code suites} that fail, as {@code Contract.method} */
    private static Set<String> failures(Class<?>... suites) {
        Set<String> failed = new TreeSet<>();
        TestExecutionListener listener = new TestExecutionListener() {
            @Override
            public void executionFinished(TestIdentifier id, TestExecutionResult result) {
                if (id.isTest() && result.getStatus() == TestExecutionResult.Status.FAILED
                        && id.getSource().orElse(null)
                        instanceof org.junit.platform.engine.support.descriptor.MethodSource method) {
                    failed.add(method.getJavaMethod().getDeclaringClass().getSimpleName() + "."
                            + method.getMethodName());
                }
            }
        };
        LauncherFactory.create().execute(LauncherDiscoveryRequestBuilder.request()
                .selectors(List.of(suites).stream().map(DiscoverySelectors::selectClass).toList()).build(), listener);
        return failed;
    }

    /** Seek on the toy without the declaration (run through the launcher above, not by surefire). */
    static class UndeclaredSeek extends SeekContract {
        @Override
        protected AdapterFixture fixture() {
            return undeclaredToy();
        }
    }

    /** The extent report on the toy without the declaration. */
    static class UndeclaredFiemap extends FiemapContract {
        @Override
        protected AdapterFixture fixture() {
            return undeclaredToy();
        }
    }
}
