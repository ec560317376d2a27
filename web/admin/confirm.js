// The one confirmation dialog (a modal <dialog>: the focus stays in it, Escape cancels) that every
// change goes through: what will happen, an optional value (a new nickname), and the reason that the
// audit log keeps. Resolves to {reason, value}, or null when cancelled.
const $ = (id) => document.getElementById(id);

export function confirmChange({ title, text, confirm = 'Confirm', value = null }) {
  const dialog = $('confirm');
  $('confirm-title').textContent = title;
  $('confirm-text').textContent = text;
  $('confirm-ok').textContent = confirm;
  $('confirm-reason').value = '';
  const valueRow = $('confirm-value-row');
  valueRow.hidden = !value;
  $('confirm-value').required = !!value;
  if (value) {
    $('confirm-value-label').textContent = value.label;
    $('confirm-value').value = value.initial || '';
  }
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => {
      if (dialog.returnValue !== 'ok') return resolve(null);
      resolve({ reason: $('confirm-reason').value.trim(), value: $('confirm-value').value.trim() });
    }, { once: true });
    dialog.returnValue = '';
    dialog.showModal();
    (value ? $('confirm-value') : $('confirm-reason')).focus();
  });
}
