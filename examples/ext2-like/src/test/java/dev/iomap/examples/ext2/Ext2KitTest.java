package dev.iomap.examples.ext2;

import dev.iomap.testkit.AdapterContractSuite;
import dev.iomap.testkit.AdapterFixture;
import dev.iomap.testkit.Geometry;
import java.util.List;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.MethodSource;

/** The ext2-like example through the whole kit on every standard geometry. */
@ParameterizedClass(name = "ext2-like {0}")
@MethodSource("geometries")
class Ext2KitTest extends AdapterContractSuite {
    @Parameter
    Geometry geometry;

    static List<Geometry> geometries() {
        return Geometry.supportedBy(new Ext2Adapter());
    }

    @Override
    protected AdapterFixture fixture() {
        return AdapterFixture.of(new Ext2Adapter(), geometry);
    }
}
