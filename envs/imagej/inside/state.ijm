// Dumps ImageJ's internal state as JSON without changing it (no selectImage, no dialogs).
function js(s) {
  out = "";
  for (i = 0; i < lengthOf(s); i++) {
    c = substring(s, i, i + 1);
    code = charCodeAt(s, i);
    if (c == "\"") out = out + "\\\"";
    else if (c == "\\") out = out + "\\\\";
    else if (code < 32) out = out + " ";
    else out = out + c;
  }
  return "\"" + out + "\"";
}
function num(x) {
  if (isNaN(x)) return "null";
  if (x == round(x) && abs(x) < 1e12) return d2s(x, 0);
  if (abs(x) < 0.0001) return d2s(x, -9);
  return d2s(x, 9);
}
function jsList(a) {
  s = "[";
  for (i = 0; i < a.length; i++) { if (i > 0) s = s + ","; s = s + js(a[i]); }
  return s + "]";
}
function bool(b) { if (b) return "true"; return "false"; }

s = "{\"n_images\":" + nImages;
s = s + ",\"image_titles\":" + jsList(getList("image.titles"));
s = s + ",\"window_titles\":" + jsList(getList("window.titles"));
if (nImages > 0) {
  getVoxelSize(pw, ph, pd, unit);
  st = selectionType();
  a = "{\"title\":" + js(getTitle()) + ",\"bit_depth\":" + bitDepth();
  a = a + ",\"width\":" + getWidth() + ",\"height\":" + getHeight() + ",\"slices\":" + nSlices;
  a = a + ",\"pixel_width\":" + num(pw) + ",\"pixel_height\":" + num(ph) + ",\"unit\":" + js(unit);
  a = a + ",\"changes\":" + bool(is("changes")) + ",\"inverting_lut\":" + bool(is("Inverting LUT"));
  a = a + ",\"directory\":" + js(getInfo("image.directory")) + ",\"filename\":" + js(getInfo("image.filename"));
  a = a + ",\"selection_type\":" + st;
  if (st >= 0) {
    getSelectionBounds(rx, ry, rw, rh);
    a = a + ",\"selection\":{\"x\":" + rx + ",\"y\":" + ry + ",\"width\":" + rw + ",\"height\":" + rh + "}";
  } else {
    a = a + ",\"selection\":null";
  }
  getRawStatistics(n, rmean, rmin, rmax);
  a = a + ",\"stats\":{\"n\":" + num(n) + ",\"mean\":" + num(rmean) + ",\"min\":" + num(rmin) + ",\"max\":" + num(rmax) + "}";
  getThreshold(lower, upper);
  a = a + ",\"threshold\":[" + num(lower) + "," + num(upper) + "]";
  s = s + ",\"active\":" + a + "}";
} else {
  s = s + ",\"active\":null";
}
r = "{\"count\":" + nResults;
headings = "";
if (nResults > 0) headings = String.getResultsHeadings;
cols = split(headings, "\t");
hs = newArray(0);
for (k = 0; k < cols.length; k++) { h = String.trim(cols[k]); if (h != "" && h != " ") hs = Array.concat(hs, h); }
r = r + ",\"headings\":" + jsList(hs) + ",\"columns\":{";
for (k = 0; k < hs.length; k++) {
  if (k > 0) r = r + ",";
  r = r + js(hs[k]) + ":[";
  for (i = 0; i < nResults && i < 2000; i++) {
    if (i > 0) r = r + ",";
    if (hs[k] == "Label") r = r + js(getResultLabel(i)); else r = r + num(getResult(hs[k], i));
  }
  r = r + "]";
}
s = s + ",\"results\":" + r + "}}";
rm = 0;
if (isOpen("ROI Manager")) rm = roiManager("count");
s = s + ",\"roi_manager_count\":" + rm;
logText = getInfo("log");
if (lengthOf(logText) > 4000) logText = substring(logText, lengthOf(logText) - 4000);
s = s + ",\"log\":" + js(logText) + "}";
__out__ = s;
