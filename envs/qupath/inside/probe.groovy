
def gui = qupath.lib.gui.QuPathGUI.getInstance()
def data = gui.getImageData()
def project = gui.getProject()
def entry = (data == null || project == null) ? null : project.getEntry(data)
if (entry != null)
    return entry.getImageName()
return data == null ? "" : data.getServer().getMetadata().getName()
