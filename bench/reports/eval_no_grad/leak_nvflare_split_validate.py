# Source: https://github.com/NVIDIA/NVFlare/issues/2443
# Report: in the vertical split-learning CIFAR10 example adapted to a ResNet50 split near the middle, training ran but calling _validate() hit torch.cuda.OutOfMemoryError; maintainers added torch.no_grad() to the validation steps
# Shape: _validate() loops over validation batches and calls per-step helpers on the learner; both halves of the split model run after eval() with grad enabled and the label side keeps each step's loss on self.val_loss
# Expect: TML003 line 22; TML003 line 27; TML001 line 29
import torch
import torch.nn as nn


class CIFAR10SplitLearner:
    def __init__(self, img_half: nn.Module, label_half: nn.Module, val_loader, device="cuda"):
        self.device = torch.device(device)
        self.img_model = img_half.to(self.device)
        self.label_model = label_half.to(self.device)
        self.val_loader = val_loader
        self.criterion = nn.CrossEntropyLoss()
        self.val_loss = []
        self.val_correct = 0
        self.val_count = 0

    def _val_forward_img_step(self, inputs):
        # data site: produce the cut-layer activations that are sent to the label site
        return self.img_model(inputs.to(self.device))  # expect: TML003

    def _val_forward_label_step(self, activations, labels):
        # label site: finish the forward pass and record the metrics
        labels = labels.to(self.device)
        pred = self.label_model(activations)  # expect: TML003
        loss = self.criterion(pred, labels)
        self.val_loss.append(loss.unsqueeze(0))  # expect: TML001
        self.val_correct += (pred.argmax(dim=1) == labels).sum().item()
        self.val_count += labels.numel()

    def _validate(self):
        self.img_model.eval()
        self.label_model.eval()
        self.val_loss, self.val_correct, self.val_count = [], 0, 0
        for _val_step, (inputs, labels) in enumerate(self.val_loader):
            activations = self._val_forward_img_step(inputs)
            self._val_forward_label_step(activations, labels)
        val_loss = torch.mean(torch.cat(self.val_loss)).item()
        val_acc = self.val_correct / max(self.val_count, 1)
        self.img_model.train()
        self.label_model.train()
        return {"val_loss": val_loss, "val_accuracy": val_acc}
