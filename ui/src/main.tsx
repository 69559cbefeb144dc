// Entry point: picks the transport for where the UI runs, then renders the app.
import { render } from "preact";
import { App } from "./app";
import { TransportContext } from "./context";
import { pickTransport } from "./transport";
import "./styles.css";

const root = document.getElementById("app");
if (root) {
  pickTransport().then(
    (transport) =>
      render(
        <TransportContext.Provider value={transport}>
          <App />
        </TransportContext.Provider>,
        root,
      ),
    (e) => {
      root.textContent = `Maskflow could not start: ${String(e)}`;
    },
  );
}
