# Source: https://github.com/LeeJunHyun/Image_Segmentation/blob/HEAD/solver.py
# Report: audit of the U-Net / R2U-Net / AttU-Net retina-vessel segmentation Solver: after unet.eval() the per-epoch validation loop and the final test loop call self.unet(images) with autograd enabled, so every forward saves activations for a backward that never comes
# Shape: Solver class; validation runs inline in train() over self.valid_loader after self.unet.eval(), and test() repeats it over self.test_loader; metrics are Python floats from evaluation helpers
# Expect: TML003 line 50; TML003 line 71
import os

import torch
import torch.nn.functional as F
from torch import optim

from evaluation import get_accuracy, get_DC, get_JS, get_sensitivity
from network import AttU_Net, R2U_Net, U_Net


class Solver:
    def __init__(self, config, train_loader, valid_loader, test_loader):
        self.train_loader, self.valid_loader, self.test_loader = train_loader, valid_loader, test_loader
        self.num_epochs = config.num_epochs
        self.lr = config.lr
        self.model_path = config.model_path
        self.model_type = config.model_type
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.criterion = torch.nn.BCELoss()
        nets = {"U_Net": U_Net, "R2U_Net": R2U_Net, "AttU_Net": AttU_Net}
        self.unet = nets[self.model_type](img_ch=3, output_ch=1).to(self.device)
        self.optimizer = optim.Adam(self.unet.parameters(), self.lr, [config.beta1, config.beta2])

    def train(self):
        unet_path = os.path.join(self.model_path, "%s-%d.pkl" % (self.model_type, self.num_epochs))
        best_score = 0.0
        for epoch in range(self.num_epochs):
            self.unet.train(True)
            epoch_loss = 0.0
            for images, GT in self.train_loader:
                images, GT = images.to(self.device), GT.to(self.device)
                SR_probs = torch.sigmoid(self.unet(images))
                loss = self.criterion(SR_probs.view(SR_probs.size(0), -1), GT.view(GT.size(0), -1))
                epoch_loss += loss.item()
                self.unet.zero_grad()
                loss.backward()
                self.optimizer.step()

            # ----------------------------- Validation ----------------------------- #
            self.unet.train(False)
            self.unet.eval()
            acc = SE = JS = DC = 0.0
            length = 0
            for images, GT in self.valid_loader:
                images, GT = images.to(self.device), GT.to(self.device)
                SR = F.sigmoid(self.unet(images))  # expect: TML003
                acc += get_accuracy(SR, GT)
                SE += get_sensitivity(SR, GT)
                JS += get_JS(SR, GT)
                DC += get_DC(SR, GT)
                length += images.size(0)
            unet_score = (JS + DC) / length
            print("Epoch %d loss %.4f [Validation] Acc %.4f SE %.4f JS %.4f DC %.4f" % (
                epoch + 1, epoch_loss, acc / length, SE / length, JS / length, DC / length))
            if unet_score > best_score:
                best_score = unet_score
                torch.save(self.unet.state_dict(), unet_path)
        return unet_path

    def test(self, unet_path):
        self.unet.load_state_dict(torch.load(unet_path, map_location=self.device))
        self.unet.eval()
        acc = DC = 0.0
        length = 0
        for images, GT in self.test_loader:
            images, GT = images.to(self.device), GT.to(self.device)
            SR = F.sigmoid(self.unet(images))  # expect: TML003
            acc += get_accuracy(SR, GT)
            DC += get_DC(SR, GT)
            length += images.size(0)
        return acc / length, DC / length
