// CartServlet - bench/leaks_tomcat.sh's web application: every request opens
// an HTTP session and keeps a small cart in it (4 items, each a String and a
// long[16], and a 1 KiB byte[]). A request with ?drop=1 invalidates its
// session at the end; the others keep theirs until it expires (30 min): a
// client that sends no cookie piles sessions up, as a crawler does.
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpSession;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

public class CartServlet extends HttpServlet {
    static final class Line {
        final String sku;
        final long[] seen = new long[16];
        Line(String sku) { this.sku = sku; }
    }

    static final class Cart {
        final List<Line> lines = new ArrayList<>();
        final byte[] note = new byte[1024];
        Cart(long t) { for (int i = 0; i < 4; i++) lines.add(new Line("sku-" + i + "-" + t)); }
    }

    @Override
    protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        HttpSession s = req.getSession(true);
        s.setAttribute("cart", new Cart(System.nanoTime()));
        resp.setContentType("text/plain");
        resp.getWriter().write("session " + s.getId() + "\n");
        if (req.getParameter("drop") != null)
            s.invalidate();
    }
}
