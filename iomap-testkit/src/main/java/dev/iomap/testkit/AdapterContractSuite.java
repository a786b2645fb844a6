package dev.iomap.testkit;

import org.junit.jupiter.api.Nested;

/**
 * The whole kit in one class: extend it, implement {@link #fixture()}, and every suite runs as a
 * nested class against the adapter.
 *
 * <pre>{@code
 * class MyAdapterTest extends AdapterContractSuite {
 *     @Override
 *     protected AdapterFixture fixture() {
 *         return AdapterFixture.of(new MyAdapter(), new Geometry(4096, 4096, 0));
 *     }
 * }
 * }</pre>
 *
 * <p>To run one area only, extend that suite instead (e.g. {@link TruncateContract}).
 */
public abstract class AdapterContractSuite {

    /**
     * The adapter under test; called once per test.
     *
     * @return the fixture
     */
    protected abstract AdapterFixture fixture();

    /** Create, open and the namespace. */
    @Nested
    public class CreateOpen extends CreateOpenContract {
        @Override
        protected AdapterFixture fixture() {
            return AdapterContractSuite.this.fixture();
        }
    }

    /** File names are byte strings. */
    @Nested
    public class Names extends NamesContract {
        @Override
        protected AdapterFixture fixture() {
            return AdapterContractSuite.this.fixture();
        }
    }

    /** rename with NOREPLACE and EXCHANGE. */
    @Nested
    public class RenameFlags extends RenameFlagsContract {
        @Override
        protected AdapterFixture fixture() {
            return AdapterContractSuite.this.fixture();
        }
    }

    /** Symbolic and hard links. */
    @Nested
    public class Links extends LinksContract {
        @Override
        protected AdapterFixture fixture() {
            return AdapterContractSuite.this.fixture();
        }
    }

    /** Special files: FIFOs, device nodes and sockets. */
    @Nested
    public class SpecialFiles extends SpecialFilesContract {
        @Override
        protected AdapterFixture fixture() {
            return AdapterContractSuite.this.fixture();
        }
    }

    /** Inode flags: chattr's immutable, append-only, sync, nodump, noatime and DAX. */
    @Nested
    public class InodeFlags extends InodeFlagsContract {
        @Override
        protected AdapterFixture fixture() {
            return AdapterContractSuite.this.fixture();
        }
    }

        /** Mode, owner, group and times. */
    @Nested
    public class Attributes extends AttributesContract {
        @Override
        protected AdapterFixture fixture() {
            return AdapterContractSuite.this.fixture();
        }
    }

    /** Extended attributes. */
    @Nested
    public class Xattr extends XattrContract {
        @Override
        protected AdapterFixture fixture() {
            return AdapterContractSuite.this.fixture();
        }
    }

    /** Reads. */
    @Nested
    public class Read extends ReadContract {
        @Override
        protected AdapterFixture fixture() {
            return AdapterContractSuite.this.fixture();
        }
    }

    /** Writes. */
    @Nested
    public class Write extends WriteContract {
        @Override
        protected AdapterFixture fixture() {
            return AdapterContractSuite.this.fixture();
        }
    }

    /** Writes whose source faults part way. */
    @Nested
    public class ShortWrite extends ShortWriteContract {
        @Override
        protected AdapterFixture fixture() {
            return AdapterContractSuite.this.fixture();
        }
    }

    /** Truncate. */
    @Nested
    public class Truncate extends TruncateContract {
        @Override
        protected AdapterFixture fixture() {
            return AdapterContractSuite.this.fixture();
        }
    }

    /** fallocate, punch hole, zero range. */
    @Nested
    public class Fallocate extends FallocateContract {
        @Override
        protected AdapterFixture fixture() {
            return AdapterContractSuite.this.fixture();
        }
    }

    /** Direct I/O (gated by DIRECT_IO). */
    @Nested
    public class DirectIo extends DirectIoContract {
        @Override
        protected AdapterFixture fixture() {
            return AdapterContractSuite.this.fixture();
        }
    }

    /** Seek data and seek hole. */
    @Nested
    public class Seek extends SeekContract {
        @Override
        protected AdapterFixture fixture() {
            return AdapterContractSuite.this.fixture();
        }
    }

    /** The extent report (fiemap). */
    @Nested
    public class Fiemap extends FiemapContract {
        @Override
        protected AdapterFixture fixture() {
            return AdapterContractSuite.this.fixture();
        }
    }

    /** Clone and unshare. */
    @Nested
    public class Clone extends CloneContract {
        @Override
        protected AdapterFixture fixture() {
            return AdapterContractSuite.this.fixture();
        }
    }

    /** fsync, sync and remount. */
    @Nested
    public class Durability extends DurabilityContract {
        @Override
        protected AdapterFixture fixture() {
            return AdapterContractSuite.this.fixture();
        }
    }

    /** Mapped writes. */
    @Nested
    public class MappedWrite extends MappedWriteContract {
        @Override
        protected AdapterFixture fixture() {
            return AdapterContractSuite.this.fixture();
        }
    }

    /** Concurrency. */
    @Nested
    public class Concurrency extends ConcurrencyContract {
        @Override
        protected AdapterFixture fixture() {
            return AdapterContractSuite.this.fixture();
        }
    }

    /** Declared capabilities. */
    @Nested
    public class Capabilities extends CapabilityContract {
        @Override
        protected AdapterFixture fixture() {
            return AdapterContractSuite.this.fixture();
        }
    }

    /** The model checker. */
    @Nested
    public class Fsx extends FsxContract {
        @Override
        protected AdapterFixture fixture() {
            return AdapterContractSuite.this.fixture();
        }
    }

    /** Atomic writes (RWF_ATOMIC): rules, limits, power cuts. */
    @Nested
    public class AtomicWrite extends AtomicWriteContract {
        @Override
        protected AdapterFixture fixture() {
            return AdapterContractSuite.this.fixture();
        }
    }

    /** Power cuts. */
    @Nested
    public class Crash extends CrashContract {
        @Override
        protected AdapterFixture fixture() {
            return AdapterContractSuite.this.fixture();
        }
    }

    /** Device errors. */
    @Nested
    public class Faults extends FaultContract {
        @Override
        protected AdapterFixture fixture() {
            return AdapterContractSuite.this.fixture();
        }
    }
}
