# Source: https://github.com/HarryVolek/PyTorch_Speaker_Verification/blob/07f996ab9e06811e25b257c2098391e426f68b61/train_speech_embedder.py
# Report: audited code: GE2E speaker-embedder training keeps an epoch loss with `total_loss = total_loss + loss` on the graph-attached GE2E loss; issue #20 of the repo reports memory growing until the process is killed after ~30 iterations
# Shape: same helper and loop, but the helper hands back `loss.item()`, so the epoch sum is a Python float
# Expect: near-miss: must be silent
import os
import random
import time

import torch
from torch.utils.data import DataLoader

from hparam import hparam as hp
from data_load import SpeakerDatasetTIMITPreprocessed
from speech_embedder_net import SpeechEmbedder, GE2ELoss


def permute_batch(mel_db_batch):
    n = hp.train.N * hp.train.M
    mel_db_batch = torch.reshape(mel_db_batch, (n, mel_db_batch.size(2), mel_db_batch.size(3)))
    perm = random.sample(range(0, n), n)
    unperm = list(perm)
    for i, j in enumerate(perm):
        unperm[j] = i
    return mel_db_batch[perm], unperm


def ge2e_step(embedder_net, ge2e_loss, optimizer, mel_db_batch, unperm):
    optimizer.zero_grad()
    embeddings = embedder_net(mel_db_batch)
    embeddings = embeddings[unperm]
    embeddings = torch.reshape(embeddings, (hp.train.N, hp.train.M, embeddings.size(1)))
    loss = ge2e_loss(embeddings)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(embedder_net.parameters(), 3.0)
    torch.nn.utils.clip_grad_norm_(ge2e_loss.parameters(), 1.0)
    optimizer.step()
    return loss.item()


def train(model_path):
    device = torch.device(hp.device)
    train_dataset = SpeakerDatasetTIMITPreprocessed()
    train_loader = DataLoader(train_dataset, batch_size=hp.train.N, shuffle=True, drop_last=True)
    embedder_net = SpeechEmbedder().to(device)
    ge2e_loss = GE2ELoss(device)
    optimizer = torch.optim.SGD([{"params": embedder_net.parameters()}, {"params": ge2e_loss.parameters()}], lr=hp.train.lr)
    embedder_net.train()
    iteration = 0
    for e in range(hp.train.epochs):
        total_loss = 0
        for batch_id, mel_db_batch in enumerate(train_loader):
            mel_db_batch, unperm = permute_batch(mel_db_batch.to(device))
            loss = ge2e_step(embedder_net, ge2e_loss, optimizer, mel_db_batch, unperm)
            total_loss = total_loss + loss
            iteration += 1
            if (batch_id + 1) % hp.train.log_interval == 0:
                mesg = "{0}\tEpoch:{1}[{2}/{3}],Iteration:{4}\tLoss:{5:.4f}\tTLoss:{6:.4f}\t\n".format(
                    time.ctime(), e + 1, batch_id + 1, len(train_dataset) // hp.train.N,
                    iteration, loss, total_loss / (batch_id + 1))
                print(mesg)
        if (e + 1) % hp.train.checkpoint_interval == 0:
            embedder_net.eval().cpu()
            path = os.path.join(hp.train.checkpoint_dir, "ckpt_epoch_%d.pth" % (e + 1))
            torch.save(embedder_net.state_dict(), path)
            embedder_net.to(device).train()
    return embedder_net
