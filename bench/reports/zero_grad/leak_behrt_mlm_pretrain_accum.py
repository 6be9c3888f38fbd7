# Source: https://github.com/mikkelfo/CORE-BEHRT/blob/0af0ee3e75773456bdb0163fe39a43501a0442c5/pretraining/pretraining.py
# Report: real code: the EHR-BERT masked-LM pretraining loop steps Adam every grad_accumulation batches but never zeroes the gradients, and the test loop runs the model after eval() without no_grad (fixed later in the repository's EHRTrainer)
# Shape: .grad keeps summing every backward of the run (wrong updates, grads never released); the test forward saves activations for a backward that never comes
# Expect: TML002 line 44; TML003 line 52
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
            if (i + 1) % args.grad_accumulation == 0:
                print(f"  Epoch {epoch}.{i}: {output.loss.item()}")
                output.loss.backward()
                optimizer.step()  # expect: TML002

        all_train_loss.append(train_loss / len(train_loader))

        model.eval()
        test_loss = 0
        for batch in test_loader:
            concepts, attention_mask, target = unpack(batch, device)
            test_loss += model(input_ids=concepts, attention_mask=attention_mask, labels=target).loss.item()  # expect: TML003

        all_test_loss.append(test_loss / len(test_loader))
        print(f"epoch {epoch}: train {all_train_loss[-1]:.4f} test {all_test_loss[-1]:.4f}")
        torch.save(model.state_dict(), f"{args.experiment_name}/model_{epoch}.pt")
    return all_train_loss, all_test_loss
