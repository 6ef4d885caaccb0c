// Starts Swagger UI on this server's own OpenAPI document. A file, not an inline script, so
// the page runs under the same Content-Security-Policy as the inspector (script-src 'self').
(function () {
  const root = document.getElementById("swagger-ui");
  window.ui = SwaggerUIBundle({
    url: root.dataset.openapi,
    domNode: root,
    deepLinking: true,
    validatorUrl: null, // the default badge would ask a server on the internet about the document
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIBundle.SwaggerUIStandalonePreset],
    layout: "BaseLayout",
  });
})();
