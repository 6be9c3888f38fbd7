# Source: https://github.com/Pulkit-Khandelwal/medical-mldg-seg/blob/3c3e92dc72f204e3121d082dd762a1dc49b46d54/mldg-seg/meta_learning_spine.py
# Report: issue #2: graphics RAM "increased rapidly" when meta-training the 3D U-Net, 32 GB not enough; audit of MLDG.test(): the periodic validation calls self.network.eval() and runs every 3D patch batch with autograd on (also: memory report: https://github.com/Pulkit-Khandelwal/medical-mldg-seg/issues/2)
# Shape: validation is a method of the trainer object, the forward goes through self.network with meta_loss=None; only numpy copies of the loss/predictions are kept, so the cost is the saved activations of each 3D batch (peak), not growth
# Expect: TML003 line 59
import os

import numpy as np
import torch
import torch.optim as optim
from torch.autograd import Variable
from tensorboardX import SummaryWriter

import Unet3D_meta_learning
from dice_loss import GeneralizedDiceLoss
from utils import compute_accuracy


class MLDG:
    def __init__(self):
        self.lr = 0.001
        self.test_every = 50
        self.writer = SummaryWriter(comment="spine-meta-learning")
        self.network = Unet3D_meta_learning.Unet3D().cuda()
        self.optimizer = optim.SGD(self.network.parameters(), lr=self.lr, momentum=0.9)
        self.loss_fn = GeneralizedDiceLoss()
        self.batImageGenVals = []
        self.best_accuracy_val = -1

    def _next(self, iters, index):
        try:
            return next(iters[index])
        except StopIteration:
            iters[index] = iter(self.batImageGenVals[index])
            return next(iters[index])

    def test(self, ite):
        self.network.eval()

        iters = [iter(loader) for loader in self.batImageGenVals]
        accuracies = []
        val_losses = []

        for im in range(2):
            for index in range(4):
                trains, labels = self._next(iters, index)

                bs = 10
                trains = trains.squeeze(0)
                labels = labels.squeeze(0)
                total_batches_per_image = int(np.shape(trains)[0] / bs)
                batch_index = 0

                for batch in range(1, total_batches_per_image + 1):
                    images_test = trains[batch_index: batch_index + bs]
                    labels_test = labels[batch_index: batch_index + bs]
                    images_test = Variable(images_test, requires_grad=False).cuda()
                    labels_test = Variable(labels_test, requires_grad=False).float().cuda()

                    outputs, predictions = self.network(images_test, meta_step_size=0.001, meta_loss=None, stop_gradient=False)  # expect: TML003

                    val_loss = self.loss_fn(outputs, labels_test.long())
                    val_loss_data = val_loss.cpu().data.numpy()

                    predictions = predictions.cpu().data.numpy()
                    predicted_classes = np.argmax(predictions, axis=1)
                    accuracy_val = compute_accuracy(predictions=predicted_classes,
                                                    labels=labels_test.cpu().data.numpy())
                    accuracies.append(accuracy_val)
                    val_losses.append(val_loss_data)

                    batch_index += bs
                    self.writer.add_scalar("Validation/Accuracy", accuracy_val, ite)
                    self.writer.add_scalar("Validation/Loss", val_loss.data, ite)
                    del outputs, val_loss

        self.network.train()
        mean_acc = np.mean(accuracies)
        print("mean val loss", np.mean(val_losses))

        if mean_acc > self.best_accuracy_val:
            self.best_accuracy_val = mean_acc
            outfile = os.path.join("saved_models", "meta_learning_spine.tar")
            torch.save({"ite": ite, "state": self.network.state_dict()}, outfile)
