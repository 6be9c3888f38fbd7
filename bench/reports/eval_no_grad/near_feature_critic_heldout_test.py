# Source: https://github.com/liyiying/Feature_Critic/blob/aeb5d9f3f40deefbf6093b6f6206c3b1a0e8abef/model_PACS.py
# Report: fixed variant of ModelBaseline_PACS.test()/heldout_test(): the split-by-split scoring runs with autograd disabled
# Shape: test() wraps the split loop in with torch.no_grad(), heldout_test() is @torch.no_grad(); train() sums per-domain losses into a per-iteration total_loss that is backpropagated (intended)
# Expect: near-miss: must be silent
import os

import numpy as np
import torch
import torch.nn as nn
from torchvision.models import alexnet


def compute_accuracy(predictions, labels):
    return float(np.mean(np.argmax(predictions, -1) == labels))


class ClassifierHomo(nn.Module):
    def __init__(self, num_classes, h=4096):
        super().__init__()
        self.fc = nn.Linear(h, num_classes)

    def forward(self, x):
        return self.fc(x)


class DGBaseline:
    def __init__(self, flags):
        self.feature_extractor_network = alexnet(weights=None).cuda()
        self.feature_extractor_network.classifier = self.feature_extractor_network.classifier[:6]
        self.phi = ClassifierHomo(flags.num_classes).cuda()
        self.opt_theta = torch.optim.SGD(self.feature_extractor_network.parameters(), lr=flags.lr, momentum=0.9)
        self.opt_phi = torch.optim.SGD(self.phi.parameters(), lr=flags.lr, momentum=0.9)
        self.ce_loss = nn.CrossEntropyLoss()
        self.best_accuracy_val = -1.0

    def load_best(self, path):
        theta, phi = torch.load(path, map_location="cuda")
        self.feature_extractor_network.load_state_dict(theta)
        self.phi.load_state_dict(phi)

    def split(self, images, threshold=100):
        n_slices = max(len(images) // threshold, 1)
        cuts = [len(images) * (k + 1) // n_slices for k in range(n_slices - 1)]
        return np.split(images, indices_or_sections=cuts)

    def test(self, images_test, labels_test, ite, log_dir):
        self.feature_extractor_network.eval()
        self.phi.eval()
        preds = []
        with torch.no_grad():
            for chunk in self.split(images_test):
                x = torch.from_numpy(np.asarray(chunk, dtype=np.float32)).cuda()
                out = self.phi(self.feature_extractor_network(x)).cpu().numpy()
                preds.append(out)
        accuracy = compute_accuracy(np.concatenate(preds), labels_test)
        with open(os.path.join(log_dir, "val.txt"), "a") as f:
            f.write("ite:{}, accuracy:{}\n".format(ite, accuracy))
        return accuracy

    def validate_workflow(self, val_sets, ite, flags):
        accs = [self.test(imgs, lbls, ite, flags.logs) for imgs, lbls in val_sets]
        mean_acc = float(np.mean(accs))
        if mean_acc > self.best_accuracy_val:
            self.best_accuracy_val = mean_acc
            torch.save((self.feature_extractor_network.state_dict(), self.phi.state_dict()),
                       os.path.join(flags.model_path, "best_model.tar"))

    @torch.no_grad()
    def heldout_test(self, images_test, labels_test, flags):
        self.load_best(os.path.join(flags.model_path, "best_model.tar"))
        self.feature_extractor_network.eval()
        self.phi.eval()
        outputs = []
        for chunk in self.split(images_test):
            x = torch.from_numpy(np.asarray(chunk, dtype=np.float32)).cuda()
            feature_out = self.feature_extractor_network(x)
            outputs.append(self.phi(feature_out).cpu().numpy())
        return compute_accuracy(np.concatenate(outputs), labels_test)

    def train(self, batch_gens, val_sets, flags):
        for it in range(flags.iteration_size):
            self.feature_extractor_network.train()
            self.phi.train()
            total_loss = 0.0
            for gen in batch_gens:
                xb, yb = gen.get_images_labels_batch()
                xb = torch.from_numpy(xb.astype(np.float32)).cuda()
                yb = torch.from_numpy(yb.astype(np.int64)).cuda()
                total_loss += self.ce_loss(self.phi(self.feature_extractor_network(xb)), yb)
            self.opt_theta.zero_grad()
            self.opt_phi.zero_grad()
            total_loss.backward()
            self.opt_theta.step()
            self.opt_phi.step()
            if it % 500 == 0 and it != 0:
                self.validate_workflow(val_sets, it, flags)
