package io.ganglion.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;

class SvgChartTest {

    @Test
    void shouldWriteWellFormedSvgWithAPolylinePerQueueAndTheKillMarker() throws Exception {
        double[] steady = new double[100];
        java.util.Arrays.fill(steady, 1000);
        double[] paused = steady.clone();
        java.util.Arrays.fill(paused, 50, 80, 0);
        SvgChart.Panel panel = new SvgChart.Panel(
                "kill <owner> & \"hold\" 0",
                -10,
                0.2,
                List.of(new SvgChart.Series("q1 (lost none)", steady), new SvgChart.Series("q2 (lost owner)", paused)),
                List.of(new SvgChart.Marker("kill ganglion-2", 0), new SvgChart.Marker("outside", 99)));
        String svg = SvgChart.render("bench failover: a&b", "confirms per second", List.of(panel, panel));

        DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
        factory.setNamespaceAware(true);
        Document document =
                factory.newDocumentBuilder().parse(new ByteArrayInputStream(svg.getBytes(StandardCharsets.UTF_8)));

        assertThat(document.getDocumentElement().getLocalName()).isEqualTo("svg");
        assertThat(document.getElementsByTagNameNS("http://www.w3.org/2000/svg", "polyline")
                        .getLength())
                .isEqualTo(4);
        assertThat(document.getDocumentElement().getTextContent())
                .contains("kill <owner> & \"hold\" 0")
                .contains("kill ganglion-2")
                .doesNotContain("outside");
        String points = document.getElementsByTagNameNS("http://www.w3.org/2000/svg", "polyline")
                .item(0)
                .getAttributes()
                .getNamedItem("points")
                .getNodeValue();
        assertThat(points.split(" ")).hasSize(100);
    }

    @Test
    void shouldEscapeMarkupAndDropControlCharacters() {
        assertThat(SvgChart.escape("a<b>&'\"\u0001c")).isEqualTo("a&lt;b&gt;&amp;&apos;&quot;c");
    }
}
