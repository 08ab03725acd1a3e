/*
 * sciagent-gym request channel: QuPath runs this as its startup script
 * (system property qupath.startup.script; QuPathGUI.maybeRunStartupScript, v0.5.1).
 *
 * A daemon thread polls a private request directory (the sandbox's own /tmp). Each request
 * "<n>.req" holds Groovy code; it is run like a script from QuPath's script editor
 * (QuPathGUI.runScript: the current project and image, QPEx's static methods) and the reply
 * {"ok", "out" | "error"} is written to "<n>.part", then renamed to "<n>.json", so a reader never
 * sees half an answer. Nothing here talks to a network.
 */
import qupath.lib.gui.QuPathGUI
import qupath.lib.io.GsonTools

import java.nio.charset.StandardCharsets
import java.nio.file.Files
import java.nio.file.StandardCopyOption

def gui = QuPathGUI.getInstance()
def dir = new File(System.getProperty("sciagent.channel", "/tmp/sciagent-qupath"))
dir.mkdirs()

def serve = {
    while (true) {
        def listed = dir.listFiles()
        def requests = listed == null ? [] : listed.findAll { it.name.endsWith(".req") }.sort { it.name }
        for (def req in requests) {
            def base = req.name.substring(0, req.name.length() - 4)
            def code = new String(Files.readAllBytes(req.toPath()), StandardCharsets.UTF_8)
            req.delete()
            def reply = new LinkedHashMap<String, Object>()
            try {
                def result = gui.runScript(null, code)
                reply.put("ok", true)
                reply.put("out", result == null ? null : result.toString())
            } catch (Throwable e) {
                def text = new StringWriter()
                e.printStackTrace(new PrintWriter(text))
                reply.put("ok", false)
                reply.put("error", text.toString().take(4000))
            }
            def part = new File(dir, base + ".part")
            Files.write(part.toPath(), GsonTools.getInstance().toJson(reply).getBytes(StandardCharsets.UTF_8))
            Files.move(part.toPath(), new File(dir, base + ".json").toPath(), StandardCopyOption.ATOMIC_MOVE)
        }
        Thread.sleep(25)
    }
}
def thread = new Thread(serve as Runnable, "sciagent-gym-channel")
thread.setDaemon(true)
thread.start()
