// Submits the hand-off form to the gateway at once; without JavaScript the guest presses its button.
document.getElementById("handoff")?.submit();
