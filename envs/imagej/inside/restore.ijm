// Sent by Adapter.restore_in_place: put ImageJ back where a launch with the task's inputs
// leaves it, or answer why not (changing nothing). The adapter prepends WINDOWS (every
// window title on the screen but "ImageJ", one string joined by "\n") and OPEN (the task's
// input paths, joined by "\n").
// Non-image windows this restores: the Results table, the Log and the ROI Manager. Set back
// too: the tool, the colours and Analyze > Set Measurements (a launch's: 19 = area, mean,
// min & max; 3 decimals). Not set back: the last values other dialogs remember.
images = getList("image.titles");
shown = split(WINDOWS, "\n");
why = "";
for (i = 0; i < shown.length; i++) {
  found = false;  // (a boolean expression is allowed in conditions only)
  if (shown[i] == "Results" || shown[i] == "Log" || shown[i] == "ROI Manager") found = true;
  for (k = 0; k < images.length; k++) if (shown[i] == images[k]) found = true;
  if (!found) why = "a window ImageJ does not list as an image: " + shown[i];
}
if (why == "" && is("Batch Mode")) why = "batch mode";
// Image > Set Scale's "global" applies to every image opened afterwards; a launch has none.
global = call("ij.ImagePlus.getStaticGlobalCalibration");
if (why == "" && global != "" && global != "null" && global != "0") why = "a global scale: " + global;
if (why != "") {
  __out__ = why;
} else {
  if (nImages > 0) close("*");
  if (isOpen("ROI Manager")) { roiManager("reset"); selectWindow("ROI Manager"); run("Close"); }
  if (isOpen("Results")) { run("Clear Results"); selectWindow("Results"); run("Close"); }
  if (isOpen("Log")) { print("\\Clear"); selectWindow("Log"); run("Close"); }
  run("Set Measurements...", "area mean min redirect=None decimal=3");
  setTool("rectangle");
  setForegroundColor(255, 255, 255);
  setBackgroundColor(0, 0, 0);
  paths = split(OPEN, "\n");
  for (i = 0; i < paths.length; i++) open(paths[i]);
  showStatus("");
  __out__ = "ok";
}
