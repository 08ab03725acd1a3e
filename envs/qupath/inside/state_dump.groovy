/*
 * sciagent-gym state dump: sent over the request channel and run inside QuPath like a script
 * from the script editor. Reads and never changes anything; its value is a JSON string:
 *
 * {"qupath_version", "project": path | null, "image": {"name", "width", "height",
 *  "pixel_width_um", "pixel_height_um", "n_channels", "rgb"} | null,
 *  "image_type": ImageType name ("BRIGHTFIELD_H_DAB", ...) | null, "image_type_name",
 *  "stains": {"name", "stain1": {"name", "vector": [r, g, b], "residual"}, "stain2", "stain3",
 *             "background": [r, g, b]} | null,
 *  "annotations": [{"id", "name", "class", "roi_type", "area_px", "area_um2", "perimeter_px",
 *                   "bounds": [x, y, w, h], "centroid": [x, y], "n_vertices", "locked",
 *                   "parent", "measurements": {...}, "num_detections", "num_positive",
 *                   "num_negative", "positive_percent"}],
 *  "detections": {"count", "cells", "by_class": {class: n}, "positive", "negative",
 *                 "positive_percent"},
 *  "n_annotations", "n_detections", "selected": [names or ids],
 *  "tma": {"n_cores", "n_missing", "grid_width", "grid_height"} | null}
 *
 * Positive/negative follow QuPath's PathClassTools (Positive, 1+, 2+, 3+ are positive;
 * Negative is negative), and positive_percent = 100 * positive / (positive + negative), as
 * the measurement table's "Positive %" (ObservableMeasurementTableData, v0.5.1).
 */
import qupath.lib.gui.QuPathGUI
import qupath.lib.io.GsonTools
import qupath.lib.objects.PathCellObject
import qupath.lib.objects.classes.PathClassTools

def finite(double v) { return (Double.isNaN(v) || Double.isInfinite(v)) ? null : v }

def counts(Collection detections) {
    int pos = 0, neg = 0
    def byClass = new TreeMap<String, Integer>()
    for (def d in detections) {
        def pc = d.getPathClass()
        def key = pc == null ? "Unclassified" : pc.toString()
        byClass.put(key, (byClass.get(key) ?: 0) + 1)
        if (pc != null && PathClassTools.isPositiveOrGradedIntensityClass(pc))
            pos++
        else if (pc != null && PathClassTools.isNegativeClass(pc))
            neg++
    }
    def out = new LinkedHashMap<String, Object>()
    out.put("count", detections.size())
    out.put("by_class", byClass)
    out.put("positive", pos)
    out.put("negative", neg)
    out.put("positive_percent", pos + neg > 0 ? 100.0 * pos / (pos + neg) : null)
    return out
}

def gui = QuPathGUI.getInstance()
def imageData = gui != null ? gui.getImageData() : getCurrentImageData()
def out = new LinkedHashMap<String, Object>()
try {
    out.put("qupath_version", String.valueOf(qupath.lib.gui.BuildInfo.getInstance().getVersion()))
} catch (Throwable e) {
    out.put("qupath_version", null)
}
def project = gui != null ? gui.getProject() : getProject()
out.put("project", project == null ? null : String.valueOf(project.getPath()))
out.put("image", null)
out.put("image_type", null)
out.put("image_type_name", null)
out.put("stains", null)
out.put("annotations", [])
out.put("detections", counts([]))
out.put("n_annotations", 0)
out.put("n_detections", 0)
out.put("selected", [])
out.put("tma", null)
if (imageData != null) {
    def server = imageData.getServer()
    def cal = server.getPixelCalibration()
    def um = cal.hasPixelSizeMicrons()
    def pw = um ? cal.getPixelWidthMicrons() : Double.NaN
    def ph = um ? cal.getPixelHeightMicrons() : Double.NaN
    def image = new LinkedHashMap<String, Object>()
    def entry = project == null ? null : project.getEntry(imageData)
    image.put("name", entry != null ? entry.getImageName() : server.getMetadata().getName())
    image.put("width", server.getWidth())
    image.put("height", server.getHeight())
    image.put("pixel_width_um", finite(pw))
    image.put("pixel_height_um", finite(ph))
    image.put("n_channels", server.nChannels())
    image.put("rgb", server.isRGB())
    out.put("image", image)
    def type = imageData.getImageType()
    out.put("image_type", type == null ? null : type.name())
    out.put("image_type_name", type == null ? null : type.toString())
    def stains = imageData.getColorDeconvolutionStains()
    if (stains != null) {
        def s = new LinkedHashMap<String, Object>()
        s.put("name", stains.getName())
        for (int i = 1; i <= 3; i++) {
            def v = stains.getStain(i)
            def st = new LinkedHashMap<String, Object>()
            st.put("name", v.getName())
            st.put("vector", [v.getRed(), v.getGreen(), v.getBlue()])
            st.put("residual", v.isResidual())
            s.put("stain" + i, st)
        }
        s.put("background", [stains.getMaxRed(), stains.getMaxGreen(), stains.getMaxBlue()])
        out.put("stains", s)
    }
    def hierarchy = imageData.getHierarchy()
    def annotations = []
    for (def a in hierarchy.getAnnotationObjects()) {
        def roi = a.getROI()
        def m = new LinkedHashMap<String, Object>()
        m.put("id", String.valueOf(a.getID()))
        m.put("name", a.getName())
        m.put("class", a.getPathClass() == null ? null : a.getPathClass().toString())
        m.put("roi_type", roi == null ? null : roi.getRoiName())
        m.put("area_px", roi == null ? null : finite(roi.getArea()))
        m.put("area_um2", roi == null || !um ? null : finite(roi.getScaledArea(pw, ph)))
        m.put("perimeter_px", roi == null ? null : finite(roi.getLength()))
        m.put("bounds", roi == null ? null : [roi.getBoundsX(), roi.getBoundsY(), roi.getBoundsWidth(), roi.getBoundsHeight()])
        m.put("centroid", roi == null ? null : [roi.getCentroidX(), roi.getCentroidY()])
        m.put("n_vertices", roi == null ? 0 : roi.getNumPoints())
        m.put("locked", a.isLocked())
        def parent = a.getParent()
        m.put("parent", parent == null || parent.isRootObject() ? null : parent.getName())
        def ml = new LinkedHashMap<String, Object>()
        for (def name in a.getMeasurementList().getMeasurementNames())
            ml.put(name, finite(a.getMeasurementList().get(name)))
        m.put("measurements", ml)
        def inside = a.getDescendantObjects(null).findAll { it.isDetection() }
        def c = counts(inside)
        m.put("num_detections", c.get("count"))
        m.put("num_positive", c.get("positive"))
        m.put("num_negative", c.get("negative"))
        m.put("positive_percent", c.get("positive_percent"))
        annotations.add(m)
    }
    out.put("annotations", annotations)
    out.put("n_annotations", annotations.size())
    def detections = hierarchy.getDetectionObjects()
    def dc = counts(detections)
    dc.put("cells", detections.count { it instanceof PathCellObject })
    out.put("detections", dc)
    out.put("n_detections", detections.size())
    out.put("selected", hierarchy.getSelectionModel().getSelectedObjects().collect { it.getName() ?: String.valueOf(it.getID()) })
    def grid = hierarchy.getTMAGrid()
    if (grid != null) {
        def t = new LinkedHashMap<String, Object>()
        t.put("n_cores", grid.nCores())
        t.put("n_missing", grid.getTMACoreList().count { it.isMissing() })
        t.put("grid_width", grid.getGridWidth())
        t.put("grid_height", grid.getGridHeight())
        out.put("tma", t)
    }
}
return GsonTools.getInstance().toJson(out)
