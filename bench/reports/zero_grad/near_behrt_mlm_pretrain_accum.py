# Source: https://github.com/mikkelfo/CORE-BEHRT/blob/0af0ee3e75773456bdb0163fe39a43501a0442c5/pretraining/pretraining.py
# Report: the fix the repository later adopted (EHRTrainer.backward_pass / test_step): backward every batch, step and zero_grad on accumulation boundaries, test forward under torch.no_grad()
# Shape: gradient accumulation with the reset inside the boundary branch; losses kept as .item() floats; the evaluation forward is grad-disabled
# Expect: near-miss: must be silent
import torch
from torch.utils.data import DataLoader
from tqdm import tqdm
from transformers import BertConfig, BertForMaskedLM


class BertEHRModel(BertForMaskedLM):
    def __init__(self, config):
        super().__init__(config)
        self.config = config


def unpack(batch, device):
    events, attention_mask, masked_events, target = (t.to(device) for t in batch)
    concepts, age, abspos, segments = masked_events.permute((2, 0, 1))
    return concepts, attention_mask, target


def mlm_pretraining(args, train_set, test_set, vocabulary, max_segments):
    config = BertConfig(vocab_size=len(vocabulary), max_position_embeddings=args.max_tokens,
                        type_vocab_size=max_segments)
    device = torch.device("cuda")
    model = BertEHRModel(config).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.learning_rate, weight_decay=args.weight_decay)
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True)
    test_loader = DataLoader(test_set, batch_size=args.batch_size, shuffle=True)

    all_train_loss, all_test_loss = [], []
    for epoch in range(args.epochs):
        model.train()
        train_loss = 0
        for i, batch in tqdm(enumerate(train_loader)):
            concepts, attention_mask, target = unpack(batch, device)
            output = model(input_ids=concepts, attention_mask=attention_mask, labels=target)

            train_loss += output.loss.item()
            (output.loss / args.grad_accumulation).backward()
            if (i + 1) % args.grad_accumulation == 0:
                print(f"  Epoch {epoch}.{i}: {output.loss.item()}")
                optimizer.step()
                optimizer.zero_grad()

        all_train_loss.append(train_loss / len(train_loader))

        model.eval()
        test_loss = 0
        with torch.no_grad():
            for batch in test_loader:
                concepts, attention_mask, target = unpack(batch, device)
                test_loss += model(input_ids=concepts, attention_mask=attention_mask, labels=target).loss.item()

        all_test_loss.append(test_loss / len(test_loader))
        print(f"epoch {epoch}: train {all_train_loss[-1]:.4f} test {all_test_loss[-1]:.4f}")
        torch.save(model.state_dict(), f"{args.experiment_name}/model_{epoch}.pt")
    return all_train_loss, all_test_loss
