
def gui = qupath.lib.gui.QuPathGUI.getInstance()
def loaded = qupath.lib.projects.ProjectIO.loadProject(
    new File(@PROJECT, "project.qpproj"), java.awt.image.BufferedImage.class)
def latch = new java.util.concurrent.CountDownLatch(1)
javafx.application.Platform.runLater {
    try {
        gui.setProject(loaded)
        gui.openImageEntry(loaded.getImageList().get(0))
    } finally {
        latch.countDown()
    }
}
latch.await()
return "ok"
