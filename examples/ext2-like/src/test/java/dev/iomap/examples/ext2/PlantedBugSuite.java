package dev.iomap.examples.ext2;

import dev.iomap.testkit.AdapterContractSuite;
import dev.iomap.testkit.AdapterFixture;

/**
 * The whole kit against the adapter in {@link #fixture}, run by {@link Ext2PlantedBugsTest} through the
 * JUnit launcher (its name is no test class name, so the build's test run does not pick it up).
 */
class PlantedBugSuite extends AdapterContractSuite {
    /** The fixture the next launch runs against; set by {@link Ext2PlantedBugsTest} before each launch. */
    static volatile AdapterFixture fixture;

    @Override
    protected AdapterFixture fixture() {
        return fixture;
    }
}
