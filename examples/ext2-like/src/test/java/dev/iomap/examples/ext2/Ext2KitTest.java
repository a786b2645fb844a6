package dev.iomap.examples.ext2;

import dev.iomap.testkit.AdapterContractSuite;
import dev.iomap.testkit.AdapterFixture;
import dev.iomap.testkit.Geometry;
import java.util.List;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The ext2-like example through the whole kit. With {@code -Dext2.allGeometries=true} on every standard
 * geometry it supports; by default (the build) on three of them: both 4 KiB-block geometries with 4 KiB
 * pages and 1 KiB blocks in large folios of 64 KiB pages, where a folio spans the most blocks. The four
 * adapters of the project run the kit on all eight in it-tests; the example's 1 KiB-block geometries
 * take 35 to 45 s each.
 */
@ParameterizedClass(name = "ext2-like {0}")
@MethodSource("geometries")
class Ext2KitTest extends AdapterContractSuite {
    @Parameter
    Geometry geometry;

    static List<Geometry> geometries() {
        List<Geometry> supported = Geometry.supportedBy(new Ext2Adapter());
        if (Boolean.getBoolean("ext2.allGeometries")) {
            return supported;
        }
        Geometry largeFolios = Geometry.largeFolios(1024, 65536);
        return supported.stream()
                .filter(g -> g.equals(largeFolios) || (g.blockSize() == 4096 && g.pageSize() == 4096))
                .toList();
    }

    @Override
    protected AdapterFixture fixture() {
        return AdapterFixture.of(new Ext2Adapter(), geometry);
    }
}
