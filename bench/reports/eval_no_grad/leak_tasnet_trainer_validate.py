# Source: https://github.com/runninging/Conv-Tasnet-for-speech-enchancement-and-seperation/blob/cdaaa297a610950baf753833c0deb4a771a684f4/trainer.py
# Report: Conv-TasNet two-speaker separation trainer: validate() runs the dev set once before training and after every epoch, scoring a PIT SI-SNR loss; here the torch.no_grad() block around the dev loop is missing (the edit that breaks the repository's correct code)
# Shape: after model.eval() in validate() the separator's forward records every encoder/TCN activation for a backward that never comes: each dev batch peaks at training-level memory (the loss itself is reduced with .item(), so nothing grows)
# Expect: TML003 line 67
import os

import numpy as np
import torch
import torch.nn as nn
from tensorboardX import SummaryWriter

device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")


class TasNetTrainer(object):
    def __init__(self, tasnet, checkpoint="checkpoint", lr=1e-5, weight_decay=0,
                 num_epoches=20, clip_norm=False):
        self.tasnet = tasnet.to(device)
        self.optimizer = torch.optim.Adam(self.tasnet.parameters(), lr=lr, weight_decay=weight_decay)
        self.scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(self.optimizer, "min", factor=0.5, patience=3)
        self.checkpoint = checkpoint
        self.num_epoches = num_epoches
        self.clip_norm = clip_norm
        self.writer = SummaryWriter("./log")
        os.makedirs(self.checkpoint, exist_ok=True)

    def sisnr(self, output, target):
        batchsize = np.shape(output)[0]
        target = target.view(batchsize, -1)
        output = output - torch.mean(output, 1, keepdim=True)
        target = target - torch.mean(target, 1, keepdim=True)
        s_shat = torch.sum(output * target, 1, keepdim=True)
        s_2 = torch.sum(target ** 2, 1, keepdim=True)
        s_target = (s_shat / s_2) * target
        e_noise = output - s_target
        return 10 * torch.log10(torch.sum(e_noise ** 2, 1, keepdim=True) / torch.sum(s_target ** 2, 1, keepdim=True))

    def pit_loss(self, out1, out2, ref1, ref2):
        loss1 = self.sisnr(out1, ref1) + self.sisnr(out2, ref2)
        loss2 = self.sisnr(out1, ref2) + self.sisnr(out2, ref1)
        return torch.mean(torch.min(loss1, loss2))

    def train(self, dataloader, epoch):
        self.tasnet.train()
        tot_loss = 0
        batch_indx = epoch * len(dataloader)
        for mix_speech, speech1, speech2 in dataloader:
            self.optimizer.zero_grad()
            mix_speech, speech1, speech2 = mix_speech.to(device), speech1.to(device), speech2.to(device)
            output1, output2 = self.tasnet(mix_speech)
            cur_loss = self.pit_loss(output1, output2, speech1, speech2)
            tot_loss += cur_loss.item()
            batch_indx += 1
            self.writer.add_scalar("train_loss", cur_loss.item(), batch_indx)
            cur_loss.backward()
            if self.clip_norm:
                nn.utils.clip_grad_norm_(self.tasnet.parameters(), self.clip_norm)
            self.optimizer.step()
        return tot_loss / len(dataloader)

    def validate(self, dataloader, epoch):
        self.tasnet.eval()
        tot_loss = 0
        batch_indx = epoch * len(dataloader)
        for mix_speech, speech1, speech2 in dataloader:
            mix_speech, speech1, speech2 = mix_speech.to(device), speech1.to(device), speech2.to(device)
            output1, output2 = self.tasnet(mix_speech)  # expect: TML003
            cur_loss = self.pit_loss(output1, output2, speech1, speech2)
            tot_loss += cur_loss.item()
            batch_indx += 1
            self.writer.add_scalar("dev_loss", cur_loss.item(), batch_indx)
        return tot_loss / len(dataloader)

    def run(self, train_set, dev_set):
        init_loss = self.validate(dev_set, 0)
        print("Epoch  0: dev loss = {:.4e}".format(init_loss))
        for epoch in range(1, self.num_epoches + 1):
            train_loss = self.train(train_set, epoch)
            valid_loss = self.validate(dev_set, epoch)
            self.scheduler.step(valid_loss)
            print("Epoch {:2d}: train loss = {:.4e} | dev loss = {:.4e}".format(epoch, train_loss, valid_loss))
            torch.save(self.tasnet.state_dict(),
                       os.path.join(self.checkpoint, "TasNET_{:d}.pkl".format(epoch)))
