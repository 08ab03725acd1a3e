
import javafx.application.Platform
import javafx.stage.Popup
import javafx.stage.Window
import java.util.concurrent.CountDownLatch
def latch = new CountDownLatch(1)
def hidden = [0]
Platform.runLater {
    try {
        for (def w in new ArrayList(Window.getWindows())) {
            if (w instanceof Popup && w.isShowing()) { w.hide(); hidden[0]++ }
        }
    } finally { latch.countDown() }
}
latch.await()
return String.valueOf(hidden[0])
