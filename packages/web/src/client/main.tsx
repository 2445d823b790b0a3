/** @jsxImportSource hono/jsx/dom */
/** The console's entry: renders the app into the page the server sent. */
import { render } from "hono/jsx/dom";
import { App } from "./app";
import "./console.css";

const root = document.getElementById("root");
if (root) {
  root.textContent = "";
  render(<App />, root);
}
