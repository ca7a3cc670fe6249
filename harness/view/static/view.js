// harness view: apply the grid filters as soon as one changes (a plain GET of the form; the
// page works without this script, with the Apply button of <noscript>).
(function () {
  var form = document.getElementById("filters");
  if (!form) return;
  form.addEventListener("change", function () {
    var params = new URLSearchParams();
    new FormData(form).forEach(function (value, key) {
      if (value) params.append(key, value);
    });
    window.location.search = params.toString();
  });
})();
