// harness view: apply the grid filters as soon as a menu or box changes (a plain GET of the
// form; without this script the Apply button does the same), and fetch the run's verdict when
// the server is still computing it.
(function () {
  var form = document.getElementById("filters");
  if (form) {
    form.addEventListener("change", function (event) {
      if (event.target && event.target.type === "search") return; // Enter or Apply submits
      var params = new URLSearchParams();
      new FormData(form).forEach(function (value, key) {
        if (value) params.append(key, value);
      });
      window.location.search = params.toString();
    });
  }
  var pending = document.querySelector("#verdict.pending");
  if (pending) {
    var tries = 0;
    var poll = function () {
      fetch(pending.dataset.src).then(function (r) {
        if (r.status === 200) {
          r.text().then(function (html) { pending.outerHTML = html; });
        } else if (r.status === 202 && ++tries < 120) {
          setTimeout(poll, 500);
        }
      });
    };
    setTimeout(poll, 300);
  }
})();
