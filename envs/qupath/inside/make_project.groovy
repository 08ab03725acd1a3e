/*
 * sciagent-gym staging: creates the task's QuPath project, run inside the sandbox with
 *   QuPath script make_project.groovy -a <stage.json> -a <project dir> -a <work dir>
 * (the `script` subcommand of QuPath v0.5.1, qupath-app/src/main/java/qupath/QuPath.java).
 *
 * stage.json: {"image": file name in the work dir, "image_type": ImageData.ImageType name,
 * "pixel_size": µm or null, "stains": a stains string or null,
 * "annotations": [{"name", "class", "roi": {"type": "rectangle", "x", "y", "w", "h"}}]}.
 * The project (project.qpproj, data/) is written with QuPath's own API (Projects.createProject,
 * ImageServerProvider.getPreferredUriImageSupport, ProjectImageEntry.saveImageData,
 * Project.syncChanges), so its format is whatever this QuPath version writes.
 */
import qupath.lib.images.ImageData
import qupath.lib.images.servers.ImageServerProvider
import qupath.lib.images.servers.ImageServerMetadata
import qupath.lib.color.ColorDeconvolutionStains
import qupath.lib.io.GsonTools
import qupath.lib.objects.PathObjects
import qupath.lib.objects.classes.PathClass
import qupath.lib.projects.Projects
import qupath.lib.regions.ImagePlane
import qupath.lib.roi.ROIs

import java.awt.image.BufferedImage

// @ARGS (the adapter's open_inputs puts a `def args = [...]` line here)
def stageText = args[0].trim().startsWith("{") ? args[0] : new File(args[0]).getText("UTF-8")
def stage = GsonTools.getInstance().fromJson(stageText, Map.class)
def projectDir = new File(args[1])
def work = new File(args[2])
if (projectDir.exists())
    projectDir.deleteDir()
projectDir.mkdirs()

def imageFile = new File(work, stage.get("image") as String)
def project = Projects.createProject(projectDir, BufferedImage.class)
def support = ImageServerProvider.getPreferredUriImageSupport(BufferedImage.class, imageFile.toURI().toString())
if (support == null)
    throw new IOException("QuPath cannot read " + imageFile)
def entry = project.addImage(support.getBuilders().get(0))
entry.setImageName(imageFile.getName())

def imageData = entry.readImageData()
def typeName = stage.get("image_type") as String
imageData.setImageType(ImageData.ImageType.valueOf(typeName == null ? "UNSET" : typeName))
def pixelSize = stage.get("pixel_size")
if (pixelSize != null) {
    def server = imageData.getServer()
    def size = (pixelSize as Number).doubleValue()
    def metadata = new ImageServerMetadata.Builder(server.getMetadata())
            .pixelSizeMicrons(size, size)
            .build()
    imageData.updateServerMetadata(metadata)   // as QP.setPixelSizeMicrons does
}
if (stage.get("stains") != null)
    imageData.setColorDeconvolutionStains(ColorDeconvolutionStains.parseColorDeconvolutionStainsArg(stage.get("stains") as String))

for (def a in (stage.get("annotations") ?: [])) {
    def r = a.get("roi")
    def roi = ROIs.createRectangleROI((r.get("x") as Number).doubleValue(), (r.get("y") as Number).doubleValue(),
            (r.get("w") as Number).doubleValue(), (r.get("h") as Number).doubleValue(), ImagePlane.getDefaultPlane())
    def cls = a.get("class") == null ? null : PathClass.fromString(a.get("class") as String)
    def annotation = PathObjects.createAnnotationObject(roi, cls)
    annotation.setName(a.get("name") as String)
    imageData.getHierarchy().addObject(annotation)
}
entry.saveImageData(imageData)
project.syncChanges()
println "sciagent-gym: project ready at " + project.getPath()
project
